import type { SocketLike } from "../realtime/socket";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- socket.io-client's listener type (SocketLike)
type Listener = (...args: any[]) => void;
type Emitted = { event: string; data: unknown };

/**
 * A stand-in for the server end of Socket.IO in component tests: records
 * what the app emits, answers acks with `respond`, and pushes server events.
 */
export class FakeSocket implements SocketLike {
  connected = false;
  emitted: Emitted[] = [];
  /** Answers an emitted event's ack; default `{ok: true}`. */
  respond: (event: string, data: unknown) => unknown = () => ({ ok: true });
  private listeners = new Map<string, Set<Listener>>();

  constructor(public workspace: string | null = null) {}

  on(event: string, listener: Listener) {
    if (!this.listeners.has(event)) this.listeners.set(event, new Set());
    this.listeners.get(event)!.add(listener);
    return this;
  }

  off(event: string, listener?: Listener) {
    if (listener) this.listeners.get(event)?.delete(listener);
    else this.listeners.delete(event);
    return this;
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- as SocketLike.emit
  emit(event: string, ...args: any[]) {
    const ack = typeof args[args.length - 1] === "function" ? (args.pop() as Listener) : null;
    this.emitted.push({ event, data: args[0] });
    if (ack) {
      const answer = this.respond(event, args[0]);
      Promise.resolve(answer).then((value) => ack(value));
    }
    return this;
  }

  /** The server pushes `event` to this client. */
  push(event: string, payload?: unknown) {
    for (const listener of [...(this.listeners.get(event) ?? [])]) listener(payload);
  }

  connect() {
    this.connected = true;
    this.push("connect");
    return this;
  }

  /** The connection drops (the client would reconnect by itself). */
  drop() {
    this.connected = false;
    this.push("disconnect", "transport close");
  }

  disconnect() {
    this.connected = false;
    return this;
  }

  sent(event: string): unknown[] {
    return this.emitted.filter((e) => e.event === event).map((e) => e.data);
  }
}

/** Every fake socket the app opened in this test, newest last. */
export const openedSockets: FakeSocket[] = [];

export function lastSocket(): FakeSocket {
  const socket = openedSockets[openedSockets.length - 1];
  if (!socket) throw new Error("the app opened no socket");
  return socket;
}
