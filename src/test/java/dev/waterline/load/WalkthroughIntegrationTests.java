package dev.waterline.load;

import java.util.List;

import dev.waterline.load.chat.Walkthrough;
import dev.waterline.load.run.LoadCli;
import dev.waterline.support.WaterlineIntegrationTest;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.web.server.LocalServerPort;
import picocli.CommandLine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The walkthrough that deploy/compose-smoke.sh runs against the compose stack holds against a
 * real server, and fails, naming the step, where the server does not do what PROTOCOL.md says.
 */
@WaterlineIntegrationTest
class WalkthroughIntegrationTests {

    @LocalServerPort
    int port;

    @Test
    void everyStepOfANewClientsFirstConversationHoldsAgainstTheServer() throws Exception {
        Walkthrough walk = new Walkthrough();
        new CommandLine(walk).parseArgs("--url", "http://127.0.0.1:" + port, "--timeout", "PT30S");

        List<String> steps = walk.run();

        assertThat(steps).hasSize(7);
        assertThat(steps.get(3)).startsWith("send accepted as ");
        assertThat(steps.getLast()).contains("§5 series");
    }

    @Test
    void aServerThatDoesNotAnswerAsTheProtocolSaysFailsTheStepThatNoticed() {
        Walkthrough walk = new Walkthrough();
        // the actuator is not the API: every REST call there answers 404, so the first step fails
        new CommandLine(walk).parseArgs("--url", "http://127.0.0.1:" + port + "/actuator", "--timeout", "PT5S");

        assertThatThrownBy(walk::run).isInstanceOf(Walkthrough.StepFailed.class)
                .hasMessageContaining("POST /api/dev/tokens answered 404");
    }

    @Test
    void theWalkthroughIsASubcommandOfTheLoadGenerator() {
        CommandLine cli = LoadCli.commandLine();
        assertThat(cli.getSubcommands()).containsKey("walkthrough");
        assertThat(cli.execute("walkthrough", "--url", "http://127.0.0.1:" + port, "--timeout", "PT30S")).isZero();
    }
}
