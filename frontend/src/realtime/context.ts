import { createContext, useContext, useEffect, useRef } from "react";
import type { ConnectionStatus, SocketLike } from "./socket";

export interface RealtimeValue {
  socket: SocketLike | null;
  status: ConnectionStatus;
  /**
   * Joins a room now and after every reconnect until the returned function is called; `onJoined` is called with the
   * join's answer each time the server has put this page in it (undefined: it was in the room already).
   */
  join(event: "join_execution" | "join_workspace", data: Record<string, unknown>, onJoined?: (ack: unknown) => void): () => void;
}

export const RealtimeContext = createContext<RealtimeValue>({
  socket: null,
  status: "offline",
  join: () => () => undefined,
});

export function useRealtime(): RealtimeValue {
  return useContext(RealtimeContext);
}

/** Calls `handler` for each `event` pushed by the server while the component is mounted. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a handler names its payload's type (socket.io-client types listeners with any)
export function useSocketEvent<T = any>(event: string, handler: (payload: T) => void): void {
  const { socket } = useRealtime();
  const latest = useRef(handler);
  latest.current = handler;
  useEffect(() => {
    if (!socket) return;
    const listener = (payload: T) => latest.current(payload);
    socket.on(event, listener);
    return () => {
      socket.off(event, listener);
    };
  }, [socket, event]);
}

/**
 * Keeps this page in an execution's room (docs/api.md#real-time-socketio `join_execution`) while it is mounted; `onJoined` is called
 * with the join's answer (`{ok, execution, pending}`) after each (re)join, when pushes sent before it may have
 * been missed.
 */
export function useExecutionRoom(executionId: string | undefined, onJoined?: (ack: unknown) => void): void {
  const { join } = useRealtime();
  const latest = useRef(onJoined);
  latest.current = onJoined;
  useEffect(() => {
    if (!executionId) return;
    const leave = join("join_execution", { execution_id: executionId }, (ack) => latest.current?.(ack));
    return leave;
  }, [join, executionId]);
}

/** Keeps this page in the workspace's room (queue and dashboard updates) while it is mounted. */
export function useWorkspaceRoom(): void {
  const { join } = useRealtime();
  useEffect(() => join("join_workspace", {}), [join]);
}
