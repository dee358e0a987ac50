package io.kvscheduler.plugins.linux.linuxcalls;

import java.util.List;

/**
 * A call to the kernel that failed. The message is the kernel's answer as iproute2 printed it (e.g.
 * {@code RTNETLINK answers: File exists}), so it reaches the value's status verbatim; {@link
 * #command()} is what was run.
 */
public final class LinuxCallException extends Exception {
  private static final long serialVersionUID = 1L;

  /** Kernel answers that repeating the same call cannot change: the request itself is wrong. */
  private static final List<String> PERMANENT =
      List.of(
          "Invalid argument",
          "Numerical result out of range",
          "greater than device maximum",
          "less than device minimum",
          "Operation not permitted",
          "Operation not supported",
          "Permission denied",
          "Unknown device type",
          "is invalid",
          "is wrong",
          "is unknown",
          "Invalid \"",
          "Not a valid");

  private final String command;
  private final int exitCode;

  public LinuxCallException(String command, int exitCode, String message) {
    super(message);
    this.command = command;
    this.exitCode = exitCode;
  }

  /** The command line that failed. */
  public String command() {
    return command;
  }

  /** The command's exit code (-1 when it could not be run or ran too long). */
  public int exitCode() {
    return exitCode;
  }

  /**
   * Whether repeating the call may succeed once something else changes: true for missing devices,
   * names taken, unreachable gateways and other conditions of the system; false for requests the
   * kernel refuses as such (invalid arguments, values out of range, unsupported link types, missing
   * permission).
   */
  public boolean retriable() {
    String m = getMessage() == null ? "" : getMessage();
    return PERMANENT.stream().noneMatch(m::contains);
  }

  /** Whether the kernel said the object does not exist. */
  public boolean notFound() {
    String m = getMessage() == null ? "" : getMessage();
    return m.contains("Cannot find device")
        || m.contains("does not exist")
        || m.contains("No such process")
        || m.contains("No such device")
        || m.contains("No such file or directory")
        // nsenter, of a namespace file that no longer holds a namespace
        || m.contains("reassociate to namespace")
        || m.contains("Cannot assign requested address");
  }

  /** Whether the kernel said the object exists already. */
  public boolean exists() {
    String m = getMessage() == null ? "" : getMessage();
    return m.contains("File exists");
  }
}
