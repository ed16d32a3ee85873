/**
 * Web Push for this browser (docs/notifications.md "Web Push"): the service worker at /sw.js shows what the server
 * pushes, even with no Coach tab open. Turning it on asks the browser's permission (in the click, as browsers
 * require), registers the worker, subscribes with the server's VAPID public key and sends the subscription to the
 * server; turning it off removes it on both sides. A browser may replace its subscription on its own (the worker's
 * `pushsubscriptionchange`): each signed-in page load, and the worker's word when it happens, send the current one
 * again (`keepPushSubscription`), so the server never keeps pushing to an endpoint that no longer delivers.
 */
import { useEffect } from "react";
import { ApiError } from "../api/client";
import type { components } from "../api/schema";
import { api, unwrap } from "../api/typed";

/** on / off; blocked: the person (or the site settings) refused notifications; unsupported: no Push API here. */
export type PushState = "on" | "off" | "blocked" | "unsupported";

export const SERVICE_WORKER_URL = "/sw.js";
const SUBSCRIPTIONS = "/api/notifications/push/subscriptions";

/** The subscription as its toJSON() gives it, which the server takes as is (a live one has its endpoint and keys). */
function subscriptionBody(subscription: PushSubscription): components["schemas"]["PushSubscriptionIn"] {
  const { endpoint, expirationTime, keys } = subscription.toJSON();
  return {
    endpoint: endpoint ?? subscription.endpoint,
    expirationTime: expirationTime ?? null,
    keys: { p256dh: keys?.p256dh ?? "", auth: keys?.auth ?? "" },
  };
}

export function pushSupported(): boolean {
  return (
    typeof window !== "undefined" &&
    typeof window.Notification === "function" &&
    "PushManager" in window &&
    typeof navigator !== "undefined" &&
    "serviceWorker" in navigator &&
    Boolean(navigator.serviceWorker)
  );
}

/** The base64url key the server gives, as the bytes PushManager.subscribe takes. */
export function keyBytes(base64url: string): Uint8Array<ArrayBuffer> {
  const base64 = base64url.replace(/-/g, "+").replace(/_/g, "/");
  const raw = atob(base64 + "=".repeat((4 - (base64.length % 4)) % 4));
  const bytes = new Uint8Array(new ArrayBuffer(raw.length));
  for (let i = 0; i < raw.length; i += 1) bytes[i] = raw.charCodeAt(i);
  return bytes;
}

async function existing(): Promise<PushSubscription | null> {
  const registration = await navigator.serviceWorker.getRegistration("/");
  return registration ? registration.pushManager.getSubscription() : null;
}

export async function currentPushState(): Promise<PushState> {
  if (!pushSupported()) return "unsupported";
  if (Notification.permission === "denied") return "blocked";
  if (Notification.permission !== "granted") return "off";
  return (await existing()) ? "on" : "off";
}

export async function turnPushOn(): Promise<PushState> {
  if (!pushSupported()) return "unsupported";
  const permission = await Notification.requestPermission(); // first, while the click still counts
  if (permission === "denied") return "blocked";
  if (permission !== "granted") return "off";
  await navigator.serviceWorker.register(SERVICE_WORKER_URL, { scope: "/" });
  const registration = await navigator.serviceWorker.ready;
  const { public_key } = await unwrap(api.GET("/api/notifications/push/key"));
  const subscription =
    (await registration.pushManager.getSubscription()) ??
    (await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: keyBytes(public_key) }));
  await unwrap(api.POST(SUBSCRIPTIONS, { body: subscriptionBody(subscription) }));
  return "on";
}

export async function turnPushOff(): Promise<PushState> {
  if (!pushSupported()) return "unsupported";
  const subscription = await existing();
  if (subscription) {
    try {
      await unwrap(api.DELETE(SUBSCRIPTIONS, { body: { endpoint: subscription.endpoint } }));
    } catch (err) {
      // already gone on the server (a push service said the browser unsubscribed): nothing left to remove there
      if (!(err instanceof ApiError && err.status === 404)) throw err;
    }
    await subscription.unsubscribe();
  }
  return Notification.permission === "denied" ? "blocked" : "off";
}

/** Sends this browser's current subscription again (the server updates it by endpoint), when push is on here:
 * permission granted and a subscription held. Returns whether one was sent. */
export async function keepPushSubscription(): Promise<boolean> {
  if (!pushSupported() || Notification.permission !== "granted") return false;
  const subscription = await existing();
  if (!subscription) return false;
  await unwrap(api.POST(SUBSCRIPTIONS, { body: subscriptionBody(subscription) }));
  return true;
}

/** The worker's message when the browser replaced the subscription (sw.js, `pushsubscriptionchange`). */
export const SUBSCRIPTION_CHANGED = "coach:push-subscription-changed";

/** Keeps the server's copy of this browser's subscription current while `active` (a person is signed in): now, and
 * whenever the service worker says the browser replaced it. */
export function useKeptPushSubscription(active: boolean): void {
  useEffect(() => {
    if (!active || !pushSupported()) return;
    const keep = () => void keepPushSubscription().catch(() => undefined); // tried again at the next page load
    keep();
    const onMessage = (event: MessageEvent) => {
      if ((event.data as { type?: string } | null)?.type === SUBSCRIPTION_CHANGED) keep();
    };
    navigator.serviceWorker.addEventListener?.("message", onMessage);
    return () => navigator.serviceWorker.removeEventListener?.("message", onMessage);
  }, [active]);
}
