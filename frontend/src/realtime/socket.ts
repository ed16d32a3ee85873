/**
 * The app's one Socket.IO connection (docs/api.md#real-time-socketio), as a small interface so
 * component tests can hand in a fake.
 *
 * The connection is authenticated by the session cookie and names the
 * workspace picked in the header (`auth.workspace`). socket.io-client
 * reconnects by itself; every room this page wants (an execution, the
 * workspace) is joined again on each (re)connect, and the server then sends
 * the pending suggestion at once, so a reconnect never loses one.
 */
export type Ack = { ok: boolean; error?: { code: string; message: string; details?: unknown } } & Record<string, unknown>;

/** What the app needs from a socket.io-client `Socket`. */
export interface SocketLike {
  connected: boolean;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- socket.io-client's own listener and emit types: a payload's type is its handler's
  on(event: string, listener: (...args: any[]) => void): unknown;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- as above
  off(event: string, listener?: (...args: any[]) => void): unknown;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- as above
  emit(event: string, ...args: any[]): unknown;
  connect(): unknown;
  disconnect(): unknown;
}

export type ConnectionStatus = "connecting" | "online" | "offline";

/** Sends `event` and waits for the server's ack; a lost connection or a timeout becomes `{ok: false}`. */
export function emitWithAck(socket: SocketLike, event: string, data: unknown, timeoutMs = 10_000): Promise<Ack> {
  return new Promise((resolve) => {
    let done = false;
    const timer = setTimeout(() => {
      if (done) return;
      done = true;
      resolve({ ok: false, error: { code: "timeout", message: "The server did not answer in time." } });
    }, timeoutMs);
    socket.emit(event, data, (answer: Ack) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(answer && typeof answer === "object" ? answer : { ok: false, error: { code: "bad_answer", message: "Unexpected answer" } });
    });
  });
}
