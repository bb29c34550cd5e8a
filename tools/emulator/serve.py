"""Runs moto's standalone server with every request serialised.

moto checks S3 conditional-write preconditions (If-Match / If-None-Match) and then stores the
object in two steps, and its server is threaded, so two racing writers can both pass the check
and one update is lost. Real S3 evaluates the precondition atomically. Serialising requests
through one lock gives the emulator S3's atomicity (measured: 20 concurrent `podmin deploy`
processes lost entries without it). Arguments are moto_server's own (-H HOST -p PORT ...).
"""
import sys
import threading

import moto.server as moto_server

_run_simple = moto_server.run_simple
_lock = threading.Lock()


def _serialised(app):
    def wrapped(environ, start_response):
        with _lock:
            # Drain the response inside the lock so the write completes before the next request.
            return list(app(environ, start_response))

    return wrapped


def _run_simple_serialised(host, port, app, *args, **kwargs):
    return _run_simple(host, port, _serialised(app), *args, **kwargs)


moto_server.run_simple = _run_simple_serialised


def main(argv=None):
    moto_server.main(sys.argv[1:] if argv is None else argv)


if __name__ == "__main__":
    main()
