package io.kvscheduler.agent.internal.rest;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.slf4j.LoggerFactory;

/**
 * Log levels at run time, in the shapes of vpp-agent's log manager (what {@code agentctl log list}
 * and {@code agentctl log set} use): {@code GET /log/list} answers {@code [{"logger": name,
 * "level": level}]} for every logger logback knows (sorted by name, the root logger as {@code
 * ROOT}, the level in force in lower case), and {@code PUT /log/{logger}/{level}} sets a logger's
 * level (and so its children's that have none of their own), answering {@code {"logger", "level"}}.
 * Levels: {@code trace}, {@code debug}, {@code info}, {@code warn} (or {@code warning}), {@code
 * error}, {@code off}; vpp-agent's {@code fatal} and {@code panic} are taken as {@code error}. An
 * unknown level gets 400 naming the accepted ones. The change lasts until the agent stops.
 */
public final class LogRoutes {
  private static final org.slf4j.Logger LOG = LoggerFactory.getLogger(LogRoutes.class);

  static final List<String> LEVELS =
      List.of("trace", "debug", "info", "warn", "warning", "error", "fatal", "panic", "off");

  private LogRoutes() {}

  /** Adds {@code GET /log/list} and {@code PUT /log/{logger}/{level}} to {@code server}. */
  public static void register(RestServer server) {
    server.route("GET", "/log/list", Set.of(), r -> list());
    server.bodylessPut("/log/{logger}/{level}", Set.of(), LogRoutes::set);
  }

  /** Logback's context, or null when another backend logs. */
  private static LoggerContext context() {
    return LoggerFactory.getILoggerFactory() instanceof LoggerContext c ? c : null;
  }

  private static Response noLogback() {
    return Response.error(
        501, "log levels can be read and changed only when logback is the logging backend");
  }

  private static Response list() {
    LoggerContext context = context();
    if (context == null) {
      return noLogback();
    }
    List<Map<String, Object>> out = new ArrayList<>();
    List<Logger> loggers = new ArrayList<>(context.getLoggerList());
    loggers.sort(Comparator.comparing(Logger::getName));
    for (Logger l : loggers) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("logger", l.getName());
      m.put("level", l.getEffectiveLevel().toString().toLowerCase(Locale.ROOT));
      out.add(m);
    }
    return Response.json(200, out);
  }

  private static Response set(Request req) {
    LoggerContext context = context();
    if (context == null) {
      return noLogback();
    }
    String name = req.pathParam("logger");
    String given = req.pathParam("level");
    Level level =
        switch (given.toLowerCase(Locale.ROOT)) {
          case "trace" -> Level.TRACE;
          case "debug" -> Level.DEBUG;
          case "info" -> Level.INFO;
          case "warn", "warning" -> Level.WARN;
          case "error", "fatal", "panic" -> Level.ERROR;
          case "off" -> Level.OFF;
          default ->
              throw new BadRequest(
                  "unknown log level '"
                      + SchedulerRoutes.abbreviate(given)
                      + "' for logger '"
                      + SchedulerRoutes.abbreviate(name)
                      + "': accepted are "
                      + String.join(", ", LEVELS));
        };
    Logger logger =
        name.equalsIgnoreCase(org.slf4j.Logger.ROOT_LOGGER_NAME)
            ? context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)
            : context.getLogger(name);
    logger.setLevel(level);
    LOG.info("log level of {} set to {} over REST", logger.getName(), level);
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("logger", name);
    m.put("level", given);
    return Response.json(200, m);
  }
}
