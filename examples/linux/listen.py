"""A TCP listener for the bridge demo: accepts connections on every port given as an argument,
writes one line naming the port to each and closes it. Prints "listening" once all ports are bound.

    python3 listen.py 8080 8081
"""
import socket
import sys
import threading


def serve(port):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", port))
    s.listen()
    return s


def accept(s, port):
    while True:
        c, _ = s.accept()
        try:
            c.sendall(b"hello from port %d\n" % port)
        finally:
            c.close()


sockets = [(serve(int(p)), int(p)) for p in sys.argv[1:]]
for s, p in sockets:
    threading.Thread(target=accept, args=(s, p), daemon=True).start()
print("listening", flush=True)
threading.Event().wait()
