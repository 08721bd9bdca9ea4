package dev.snapshots.harness.cluster;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.flink.annotation.Internal;

/**
 * The JobManager's address as TaskManagers and clients know it, what a service-discovery name is on
 * ECS: a process of the local cluster that forwards every new connection, on the RPC port and on
 * the REST port, to the JobManager currently named in a file. Two JobManagers can then run at once
 * (a deployment at 200 %) while the address names one of them, and TaskManagers that lose theirs
 * register with whichever it names next, as they would after a DNS change. Each JobManager binds
 * ports of its own and advertises this address ({@code jobmanager.rpc.bind-port} vs {@code
 * jobmanager.rpc.port}), so its RPC accepts what arrives through here.
 */
@Internal
public final class JobManagerAddress {
    private JobManagerAddress() {}

    /**
     * {@code ADDRESS_FILE LISTEN_PORT...}: the file holds one line, "NAME PORT...", the current
     * JobManager and its ports in the order of the listening ports.
     */
    public static void main(String[] args) throws Exception {
        Path file = Path.of(args[0]);
        for (int i = 1; i < args.length; i++) {
            ServerSocket listener =
                    new ServerSocket(
                            Integer.parseInt(args[i]), 50, InetAddress.getLoopbackAddress());
            int slot = i;
            daemon(() -> accept(listener, file, slot));
        }
        Thread.currentThread().join(); // until 'cluster down' stops this process
    }

    private static void accept(ServerSocket listener, Path file, int slot) {
        while (true) {
            try {
                Socket client = listener.accept();
                try {
                    String[] current = Files.readString(file).trim().split(" ");
                    Socket upstream =
                            new Socket(
                                    InetAddress.getLoopbackAddress(),
                                    Integer.parseInt(current[slot]));
                    daemon(() -> pump(client, upstream));
                    daemon(() -> pump(upstream, client));
                } catch (IOException | RuntimeException e) {
                    client.close(); // no JobManager there: the client retries, as it would
                }
            } catch (IOException e) {
                return;
            }
        }
    }

    /**
     * Copies until either side ends, then closes both: a JobManager that exits ends its
     * connections.
     */
    private static void pump(Socket from, Socket to) {
        try (InputStream in = from.getInputStream();
                OutputStream out = to.getOutputStream()) {
            in.transferTo(out);
        } catch (IOException ended) {
            // closed by either side
        } finally {
            closeQuietly(from);
            closeQuietly(to);
        }
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // already closed
        }
    }

    private static void daemon(Runnable r) {
        Thread t = new Thread(r);
        t.setDaemon(true);
        t.start();
    }
}
