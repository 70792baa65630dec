package dev.waterline.architecture.planted;

import java.sql.Connection;
import java.sql.SQLException;

/** Breaks the JDBC rule: neither a repository nor in an adapter package, yet it speaks JDBC. */
public class PlantedJdbcUser {

    public boolean valid(Connection connection) throws SQLException {
        return connection.isValid(1);
    }
}
