/**
 * The load generator's entry point and the plumbing every run shares: {@code Main} (the jar's main
 * class, kept out of the server's test compilation), the picocli command line ({@code LoadCli}, whose
 * subcommands live in the other packages) and the run's immutable {@code LoadConfig}; the counters
 * ({@code Stats}, {@code Timeline}), the server's metrics ({@code ServerMetrics}), CPU time
 * ({@code CpuMeter}) and the {@code Report} a run ends with.
 */
package dev.waterline.load.run;
