package dev.waterline.web;

import dev.waterline.auth.ApiAuthentication;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.servlet.config.annotation.InterceptorRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

/**
 * Every {@code /api/**} request passes, in this order: authentication (401; the dev-token
 * endpoint excepted), the rate limit (429), the input gate on its parameters and path variables
 * (400); its JSON body passes the input gate as it is read.
 */
@Configuration(proxyBeanMethods = false)
class WebConfig implements WebMvcConfigurer {

    private final ApiAuthentication authentication;
    private final ApiRateLimit rateLimit;
    private final InputChecks.Parameters parameters;

    WebConfig(ApiAuthentication authentication, ApiRateLimit rateLimit, InputChecks.Parameters parameters) {
        this.authentication = authentication;
        this.rateLimit = rateLimit;
        this.parameters = parameters;
    }

    @Override
    public void addInterceptors(InterceptorRegistry registry) {
        registry.addInterceptor(authentication).addPathPatterns("/api/**").excludePathPatterns("/api/dev/tokens");
        registry.addInterceptor(rateLimit).addPathPatterns("/api/**");
        registry.addInterceptor(parameters).addPathPatterns("/api/**");
    }
}
