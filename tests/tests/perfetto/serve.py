# Serves a directory on 127.0.0.1 (port chosen by the OS, printed on stdout) for the
# Perfetto harness, and writes the body of the first POST /result to the given file.
import http.server, sys, os, functools

root, out = sys.argv[1], sys.argv[2]

class Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, '.wasm': 'application/wasm', '.js': 'text/javascript'}

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get('Content-Length', 0)))
        with open(out + '.tmp', 'wb') as f:
            f.write(body)
        os.replace(out + '.tmp', out)
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass

server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), functools.partial(Handler, directory=root))
print(server.server_address[1], flush=True)
server.serve_forever()
