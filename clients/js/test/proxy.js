// A TCP proxy on loopback that a test can cut: hold() stops what the server says from reaching
// the client (a frame on the wire that is never answered), cut() ends every connection through
// it, down() refuses new ones as a dead host would and up() lets them through again.
import { createServer, connect } from 'node:net';

export class TcpProxy {
  #server = null;
  #pipes = new Set();
  connections = 0;

  constructor(targetPort, port = 0) {
    this.targetPort = targetPort;
    this.port = port;
  }

  static async start(targetPort) {
    const p = new TcpProxy(targetPort);
    await p.up();
    return p;
  }

  get base() { return `http://127.0.0.1:${this.port}`; }

  up() {
    return new Promise((resolve, reject) => {
      const server = createServer((client) => this.#pipe(client));
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => {
        this.port = server.address().port;
        this.#server = server;
        resolve();
      });
    });
  }

  #pipe(client) {
    this.connections++;
    const upstream = connect(this.targetPort, '127.0.0.1');
    const pipe = { client, upstream, held: false };
    this.#pipes.add(pipe);
    client.on('data', (d) => upstream.write(d));
    upstream.on('data', (d) => { if (!pipe.held) client.write(d); });
    const end = () => { this.#pipes.delete(pipe); client.destroy(); upstream.destroy(); };
    client.on('close', end);
    upstream.on('close', end);
    client.on('error', end);
    upstream.on('error', end);
  }

  hold() { for (const p of this.#pipes) p.held = true; }

  cut() { for (const p of [...this.#pipes]) { p.client.destroy(); p.upstream.destroy(); } }

  async down() {
    const server = this.#server;
    this.#server = null;
    this.cut();
    if (server) await new Promise((r) => server.close(r));
  }
}
