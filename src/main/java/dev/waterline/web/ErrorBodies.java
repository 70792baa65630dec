package dev.waterline.web;

import java.util.Map;

import jakarta.servlet.RequestDispatcher;
import jakarta.servlet.http.HttpServletRequest;
import org.springframework.boot.webmvc.error.ErrorController;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code /error}: what the container answers for a failure outside Spring MVC's handlers (a
 * request refused by a filter or by the servlet container itself) carries the same body as every
 * other error, {@code {"error":"<code>","message":"…"}}, never Spring Boot's default page.
 */
@RestController
class ErrorBodies implements ErrorController {

    @RequestMapping("/error")
    ResponseEntity<Map<String, String>> error(HttpServletRequest request) {
        Object status = request.getAttribute(RequestDispatcher.ERROR_STATUS_CODE);
        int code = status instanceof Integer i ? i : HttpStatus.INTERNAL_SERVER_ERROR.value();
        Object message = request.getAttribute(RequestDispatcher.ERROR_MESSAGE);
        String text = message instanceof String m && !m.isBlank() ? m : HttpStatus.valueOf(code).getReasonPhrase();
        return ApiErrors.body(HttpStatus.valueOf(code), ApiErrors.code(code), text);
    }
}
