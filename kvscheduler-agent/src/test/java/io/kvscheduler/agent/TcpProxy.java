package io.kvscheduler.agent;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A loopback TCP endpoint for network faults in tests: forwards to a target ({@link Mode#FORWARD}),
 * closes what it accepts ({@link Mode#REFUSE}), accepts and never answers ({@link Mode#BLACKHOLE},
 * the target is never contacted), or accepts and holds connections until it forwards again ({@link
 * Mode#HOLD}: a network that is slow to come back). {@link #cut()} closes every open connection;
 * {@link #freeze} stops the traffic of the open ones without closing them (a silent partition: no
 * reset, no error, nothing arrives).
 */
final class TcpProxy implements AutoCloseable {
  enum Mode {
    FORWARD,
    REFUSE,
    BLACKHOLE,
    HOLD
  }

  private final ServerSocket server;
  private final InetSocketAddress target;
  private final List<Socket> open = new CopyOnWriteArrayList<>();
  private final List<Socket> held = new CopyOnWriteArrayList<>();
  private volatile Mode mode;
  private volatile boolean closed;
  private volatile boolean frozen;

  /** A proxy to {@code targetPort} on loopback ({@code 0}: none, for a blackhole). */
  TcpProxy(int targetPort, Mode mode) throws IOException {
    this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    this.target = new InetSocketAddress(InetAddress.getLoopbackAddress(), targetPort);
    this.mode = mode;
    Thread t = new Thread(this::acceptLoop, "tcp-proxy-" + server.getLocalPort());
    t.setDaemon(true);
    t.start();
  }

  /** {@code 127.0.0.1:<port>} of the proxy. */
  String address() {
    return "127.0.0.1:" + server.getLocalPort();
  }

  /** From now on, new connections are handled in {@code m}; held ones are forwarded now. */
  synchronized void mode(Mode m) {
    this.mode = m;
    if (m == Mode.FORWARD) {
      for (Socket s : held) {
        forward(s);
      }
      held.clear();
    }
  }

  /**
   * While {@code true}, what the open connections carry is held back (kept, and delivered once
   * unfrozen); the connections stay open.
   */
  void freeze(boolean freeze) {
    this.frozen = freeze;
  }

  /** Closes every open connection (both sides). */
  void cut() {
    for (Socket s : open) {
      closeQuietly(s);
    }
    open.clear();
    for (Socket s : held) {
      closeQuietly(s);
    }
    held.clear();
  }

  private void acceptLoop() {
    while (!closed) {
      Socket client;
      try {
        client = server.accept();
      } catch (IOException e) {
        return;
      }
      synchronized (this) {
        switch (mode) {
          case REFUSE -> closeQuietly(client);
          case BLACKHOLE -> open.add(client); // held open, never read nor answered
          case HOLD -> held.add(client);
          case FORWARD -> forward(client);
          default -> throw new IllegalStateException();
        }
      }
    }
  }

  private void forward(Socket client) {
    Socket upstream = new Socket();
    try {
      upstream.connect(target, 2000);
    } catch (IOException e) {
      closeQuietly(client);
      closeQuietly(upstream);
      return;
    }
    open.add(client);
    open.add(upstream);
    pump(client, upstream);
    pump(upstream, client);
  }

  private void pump(Socket from, Socket to) {
    Thread t =
        new Thread(
            () -> {
              byte[] buf = new byte[16384];
              try (InputStream in = from.getInputStream();
                  OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buf)) >= 0) {
                  while (frozen && !closed) {
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
                  }
                  out.write(buf, 0, n);
                  out.flush();
                }
              } catch (IOException e) {
                // the connection is gone
              } finally {
                closeQuietly(from);
                closeQuietly(to);
                open.remove(from);
                open.remove(to);
              }
            },
            "tcp-proxy-pump");
    t.setDaemon(true);
    t.start();
  }

  private static void closeQuietly(Socket s) {
    try {
      s.close();
    } catch (IOException e) {
      // already closed
    }
  }

  @Override
  public void close() throws IOException {
    closed = true;
    server.close();
    cut();
  }
}
