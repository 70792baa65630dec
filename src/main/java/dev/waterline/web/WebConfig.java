package dev.waterline.web;

import dev.waterline.auth.ApiAuthentication;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.CacheControl;
import org.springframework.web.servlet.HandlerInterceptor;
import org.springframework.web.servlet.config.annotation.InterceptorRegistry;
import org.springframework.web.servlet.config.annotation.ResourceHandlerRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

/**
 * With the home page on ({@code waterline.web.home-page}), the demo's files are served under
 * {@code /demo/} and the JavaScript client's (copied from {@code clients/js/src} by the build)
 * under {@code /client/}; off, neither path exists.
 * <p>
 * Every {@code /api/**} request passes, in this order (after {@link RequestTargets}, which refuses a
 * malformed path or query on every path): authentication (401; the dev-token
 * endpoint excepted), the rate limit (429), the input gate on its parameters and path variables
 * (400); its JSON body passes the input gate as it is read.
 */
@Configuration(proxyBeanMethods = false)
class WebConfig implements WebMvcConfigurer {

    private final ApiAuthentication authentication;
    private final ApiRateLimit rateLimit;
    private final InputChecks.Parameters parameters;
    private final WebProperties web;

    WebConfig(ApiAuthentication authentication, ApiRateLimit rateLimit, InputChecks.Parameters parameters, WebProperties web) {
        this.authentication = authentication;
        this.rateLimit = rateLimit;
        this.parameters = parameters;
        this.web = web;
    }

    @Override
    public void addResourceHandlers(ResourceHandlerRegistry registry) {
        if (web.homePage()) {
            registry.addResourceHandler("/demo/**").addResourceLocations("classpath:/demo/").setCacheControl(CacheControl.noCache());
            registry.addResourceHandler("/client/**").addResourceLocations("classpath:/waterline-client/").setCacheControl(CacheControl.noCache());
        }
    }

    @Override
    public void addInterceptors(InterceptorRegistry registry) {
        registry.addInterceptor(authentication).addPathPatterns("/api/**").excludePathPatterns("/api/dev/tokens");
        registry.addInterceptor(rateLimit).addPathPatterns("/api/**");
        registry.addInterceptor(parameters).addPathPatterns("/api/**");
        if (web.homePage()) {
            registry.addInterceptor(new DemoHeaders()).addPathPatterns("/demo/**", "/client/**");
        }
    }

    /** The demo's files carry the page's policy too: /demo/index.html opened directly must not run or frame more than / does. */
    static final class DemoHeaders implements HandlerInterceptor {
        @Override
        public boolean preHandle(HttpServletRequest request, HttpServletResponse response, Object handler) {
            response.setHeader("Content-Security-Policy", HomePage.DEMO_POLICY);
            response.setHeader("X-Content-Type-Options", "nosniff");
            return true;
        }
    }
}
