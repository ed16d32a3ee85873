import { useCallback, useEffect, useMemo, useRef, useState, type ReactNode } from "react";
import { io } from "socket.io-client";
import { RealtimeContext, type RealtimeValue } from "./context";
import type { ConnectionStatus, SocketLike } from "./socket";

type Room = { event: "join_execution" | "join_workspace"; data: Record<string, unknown> };
const LEAVE: Record<Room["event"], string | null> = { join_execution: "leave_execution", join_workspace: null };

/**
 * Opens the Socket.IO connection for `workspaceId` (a new one when it
 * changes), reports whether it is online, and rejoins the wanted rooms after
 * every reconnect. `connect` is injectable for tests.
 */
export function RealtimeProvider({
  workspaceId,
  children,
  connect = (workspace) =>
    io({ path: "/socket.io", auth: { workspace }, withCredentials: true, reconnectionDelayMax: 5_000 }) as unknown as SocketLike,
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

  useEffect(() => {
    const s = connectRef.current(workspaceId);
    setStatus(s.connected ? "online" : "connecting");
    const onConnect = () => {
      setStatus("online");
      for (const room of rooms.current.values()) s.emit(room.event, room.data, () => undefined);
    };
    const onDown = () => setStatus("offline");
    s.on("connect", onConnect);
    s.on("disconnect", onDown);
    s.on("connect_error", onDown);
    setSocket(s);
    return () => {
      s.off("connect", onConnect);
      s.off("disconnect", onDown);
      s.off("connect_error", onDown);
      s.disconnect();
      setSocket(null);
    };
  }, [workspaceId]);

  const join = useCallback(
    (event: Room["event"], data: Record<string, unknown>) => {
      const key = nextKey.current++;
      rooms.current.set(key, { event, data });
      if (socket?.connected) socket.emit(event, data, () => undefined);
      return () => {
        rooms.current.delete(key);
        const leave = LEAVE[event];
        const stillWanted = [...rooms.current.values()].some(
          (r) => r.event === event && JSON.stringify(r.data) === JSON.stringify(data),
        );
        if (leave && socket?.connected && !stillWanted) socket.emit(leave, data, () => undefined);
      };
    },
    [socket],
  );

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
