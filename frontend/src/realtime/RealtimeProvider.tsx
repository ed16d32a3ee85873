import { useCallback, useEffect, useMemo, useRef, useState, type ReactNode } from "react";
import { io } from "socket.io-client";
import { RealtimeContext, type RealtimeValue } from "./context";
import type { ConnectionStatus, SocketLike } from "./socket";

type Room = { event: "join_execution" | "join_workspace"; data: Record<string, unknown>; onJoined?: (ack: unknown) => void };
const LEAVE: Record<Room["event"], string | null> = { join_execution: "leave_execution", join_workspace: null };
const roomKey = (room: Room) => `${room.event}:${JSON.stringify(room.data)}`;

/**
 * Opens the Socket.IO connection for `workspaceId` (a new one when it
 * changes), reports whether it is online, and rejoins the wanted rooms after
 * every reconnect. `connect` is injectable for tests.
 */
export function RealtimeProvider({
  workspaceId,
  children,
  connect = (workspace) =>
    io({
      path: "/socket.io",
      auth: { workspace },
      withCredentials: true,
      reconnectionDelayMax: 5_000,
      // A WebSocket straight away: one round trip, where starting with long-polling took four or five requests
      // (handshake, connect, upgrade probe) and held HTTP connections the page's first reads wait for. Where a
      // WebSocket cannot open (a proxy that refuses the upgrade), it falls back to long-polling.
      transports: ["websocket", "polling"],
      tryAllTransports: true,
    }) as unknown as SocketLike,
}: {
  workspaceId: string | null;
  children: ReactNode;
  connect?: (workspaceId: string | null) => SocketLike;
}) {
  const [socket, setSocket] = useState<SocketLike | null>(null);
  const [status, setStatus] = useState<ConnectionStatus>("connecting");
  const rooms = useRef(new Map<number, Room>());
  const nextKey = useRef(0);
  const connectRef = useRef(connect);
  const socketRef = useRef<SocketLike | null>(null);
  // A room's join was answered: whoever wants it is told (to read what pushes before the join did not carry).
  const joined = useCallback((key: string, ack?: { ok?: boolean }) => {
    if (ack?.ok === false) return;
    for (const room of rooms.current.values()) if (roomKey(room) === key) room.onJoined?.(ack);
  }, []);

  useEffect(() => {
    const s = connectRef.current(workspaceId);
    setStatus(s.connected ? "online" : "connecting");
    const joinAll = () => {
      // each room once, however many components want it; each of them told when it is in
      const distinct = new Map([...rooms.current.values()].map((room) => [roomKey(room), room]));
      for (const [key, room] of distinct) s.emit(room.event, room.data, (ack?: { ok?: boolean }) => joined(key, ack));
    };
    const onConnect = () => {
      setStatus("online");
      joinAll();
    };
    const onDown = () => setStatus("offline");
    s.on("connect", onConnect);
    s.on("disconnect", onDown);
    s.on("connect_error", onDown);
    socketRef.current = s;
    if (s.connected) joinAll();
    setSocket(s);
    return () => {
      s.off("connect", onConnect);
      s.off("disconnect", onDown);
      s.off("connect_error", onDown);
      s.disconnect();
      socketRef.current = null;
      setSocket(null);
    };
  }, [workspaceId, joined]);

  // Stable: a new connection joins every wanted room when it connects, so a component's room is not left and
  // joined again (a second join) when the connection changes.
  const join = useCallback((event: Room["event"], data: Record<string, unknown>, onJoined?: (ack: unknown) => void) => {
    const key = nextKey.current++;
    const wanted = () => [...rooms.current.values()].some((r) => roomKey(r) === roomKey({ event, data }));
    const already = wanted(); // another component keeps this room: no second join
    rooms.current.set(key, { event, data, onJoined });
    const now = socketRef.current;
    if (now?.connected && !already) now.emit(event, data, (ack?: { ok?: boolean }) => joined(roomKey({ event, data }), ack));
    else if (now?.connected) onJoined?.(undefined); // in the room already: from now on (no answer to go by)
    return () => {
      rooms.current.delete(key);
      const leave = LEAVE[event];
      const current = socketRef.current;
      if (leave && current?.connected && !wanted()) current.emit(leave, data, () => undefined);
    };
  }, [joined]);

  const value = useMemo<RealtimeValue>(() => ({ socket, status, join }), [socket, status, join]);
  return <RealtimeContext.Provider value={value}>{children}</RealtimeContext.Provider>;
}

/** How long the first connection may take before the banner says it is still connecting (no flash on load). */
export const CONNECTING_NOTICE_MS = 2_000;

/**
 * "Offline — reconnecting…" while the live connection is down (text, not colour alone). The first connection of
 * a page load is only mentioned when it takes longer than `CONNECTING_NOTICE_MS`: it usually takes a fraction of
 * a second, and a banner shown for that long only flashes.
 */
export function ConnectionBanner({ status }: { status: ConnectionStatus }) {
  const [slow, setSlow] = useState(false);
  useEffect(() => {
    if (status !== "connecting") {
      setSlow(false);
      return;
    }
    const timer = setTimeout(() => setSlow(true), CONNECTING_NOTICE_MS);
    return () => clearTimeout(timer);
  }, [status]);
  if (status === "online" || (status === "connecting" && !slow)) return null;
  return (
    <div className="connection-banner" role="status" data-status={status}>
      {status === "offline"
        ? "Offline — live updates paused, reconnecting…"
        : "Connecting to live updates…"}
    </div>
  );
}
