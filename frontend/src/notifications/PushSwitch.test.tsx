import { act, renderHook, screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it, vi } from "vitest";
import { jsonResponse, renderPage, stubFetch } from "../test/utils";
import { PushSwitch } from "./PushSwitch";
import { installFakeNotification } from "./testNotifications";
import { SUBSCRIPTION_CHANGED, keepPushSubscription, keyBytes, useKeptPushSubscription } from "./webPush";

const PUBLIC_KEY = "BEl62iUYgUivxIkv69yViEuiBIa-Ib9-SkvMeAtA3LFgDzkrxZJjSgSnfckjBJuBkr3qBUYIHBQFLXYp5Nksh8U";

/** addEventListener / removeEventListener / dispatchEvent of a fresh EventTarget, for the fake container. */
function eventTarget() {
  const target = new EventTarget();
  return {
    addEventListener: target.addEventListener.bind(target),
    removeEventListener: target.removeEventListener.bind(target),
    dispatchEvent: target.dispatchEvent.bind(target),
  };
}

/** A stand-in for a browser's service worker container and push manager: records what the page asks of them. */
function installFakePush(existing: boolean) {
  const subscription = {
    endpoint: "https://push.example.net/send/abc",
    toJSON: () => ({ endpoint: "https://push.example.net/send/abc", expirationTime: null,
      keys: { p256dh: "BPk-p256dh", auth: "auth-secret" } }),
    unsubscribe: vi.fn(async () => true),
  };
  let current: typeof subscription | null = existing ? subscription : null;
  const pushManager = {
    getSubscription: vi.fn(async () => current),
    subscribe: vi.fn(async (_options: PushSubscriptionOptionsInit) => (current = subscription)),
  };
  let registered = existing;
  const registration = { pushManager };
  const serviceWorker = {
    ...eventTarget(),
    register: vi.fn(async (_url: string, _options?: RegistrationOptions) => {
      registered = true;
      return registration;
    }),
    getRegistration: vi.fn(async () => (registered ? registration : undefined)),
    ready: Promise.resolve(registration),
  };
  Object.defineProperty(navigator, "serviceWorker", { value: serviceWorker, configurable: true });
  vi.stubGlobal("PushManager", function PushManager() {});
  return { serviceWorker, pushManager, subscription };
}

afterEach(() => {
  Reflect.deleteProperty(navigator, "serviceWorker");
});

describe("PushSwitch", () => {
  it("asks permission, registers /sw.js, subscribes with the server's key and sends the subscription", async () => {
    const notification = installFakeNotification("default", "granted");
    const push = installFakePush(false);
    const { calls } = stubFetch((call) => {
      if (call.url === "/api/notifications/push/key") return jsonResponse({ public_key: PUBLIC_KEY });
      return jsonResponse({ id: "s-1", endpoint: push.subscription.endpoint }, 201);
    });
    renderPage(<PushSwitch />, { route: "/settings", path: "/settings" });
    const toggle = await screen.findByRole("switch", { name: "Notify this browser" });
    expect(toggle).toHaveAttribute("aria-checked", "false");
    await userEvent.setup().click(toggle);
    await waitFor(() => expect(toggle).toHaveAttribute("aria-checked", "true"));
    expect(notification.requestPermission).toHaveBeenCalledTimes(1);
    expect(push.serviceWorker.register).toHaveBeenCalledWith("/sw.js", { scope: "/" });
    const options = push.pushManager.subscribe.mock.calls[0]![0];
    expect(options.userVisibleOnly).toBe(true);
    expect(Array.from(options.applicationServerKey as Uint8Array)).toEqual(Array.from(keyBytes(PUBLIC_KEY)));
    expect((options.applicationServerKey as Uint8Array).length).toBe(65); // an uncompressed P-256 point
    const sent = calls.find((c) => c.method === "POST");
    expect(sent?.url).toBe("/api/notifications/push/subscriptions");
    expect(sent?.body).toEqual(push.subscription.toJSON());
    expect(screen.queryByRole("alert")).toBeNull();
  });

  it("says so when the person refuses, and subscribes nothing", async () => {
    installFakeNotification("default", "denied");
    const push = installFakePush(false);
    const { calls } = stubFetch(() => jsonResponse({}));
    renderPage(<PushSwitch />, { route: "/settings", path: "/settings" });
    const toggle = await screen.findByRole("switch", { name: "Notify this browser" });
    await userEvent.setup().click(toggle);
    expect(await screen.findByRole("alert")).toHaveTextContent("blocks Coach's notifications");
    expect(toggle).toHaveAttribute("aria-checked", "false");
    expect(push.pushManager.subscribe).not.toHaveBeenCalled();
    expect(calls.some((c) => c.method === "POST")).toBe(false);
  });

  it("is off and explains itself where the browser has no Push API", async () => {
    installFakeNotification("default", "granted");
    stubFetch(() => jsonResponse({}));
    renderPage(<PushSwitch />, { route: "/settings", path: "/settings" });
    const toggle = await screen.findByRole("switch", { name: "Notify this browser" });
    expect(toggle).toBeDisabled();
    expect(screen.getByRole("alert")).toHaveTextContent("does not support Web Push");
  });

  it("turned off, removes the subscription from the server and the browser", async () => {
    installFakeNotification("granted");
    const push = installFakePush(true);
    const { calls } = stubFetch(() => new Response(null, { status: 204 }));
    renderPage(<PushSwitch />, { route: "/settings", path: "/settings" });
    const toggle = await screen.findByRole("switch", { name: "Notify this browser" });
    await waitFor(() => expect(toggle).toHaveAttribute("aria-checked", "true"));
    await userEvent.setup().click(toggle);
    await waitFor(() => expect(toggle).toHaveAttribute("aria-checked", "false"));
    const removed = calls.find((c) => c.method === "DELETE");
    expect(removed?.url).toBe("/api/notifications/push/subscriptions");
    expect(removed?.body).toEqual({ endpoint: push.subscription.endpoint });
    expect(push.subscription.unsubscribe).toHaveBeenCalledTimes(1);
  });
});

describe("keeping the server's copy of this browser's subscription", () => {
  it("sends the subscription the browser holds now, when push is allowed here, and again when the worker says it changed", async () => {
    installFakeNotification("granted");
    const push = installFakePush(true);
    const { calls } = stubFetch(() => jsonResponse({ id: "s-1", endpoint: push.subscription.endpoint }, 201));
    const sent = () => calls.filter((c) => c.method === "POST" && c.url === "/api/notifications/push/subscriptions");
    const { unmount } = renderHook(() => useKeptPushSubscription(true));
    await waitFor(() => expect(sent()).toHaveLength(1));
    expect(sent()[0]!.body).toEqual(push.subscription.toJSON());
    // the browser replaced it (sw.js pushsubscriptionchange): the page sends the new one
    act(() => {
      push.serviceWorker.dispatchEvent(new MessageEvent("message", { data: { type: SUBSCRIPTION_CHANGED } }));
    });
    await waitFor(() => expect(sent()).toHaveLength(2));
    unmount();
  });

  it("sends nothing where push is not on: no permission, or no subscription", async () => {
    installFakeNotification("default");
    installFakePush(true);
    const { calls } = stubFetch(() => jsonResponse({}, 201));
    expect(await keepPushSubscription()).toBe(false);
    installFakeNotification("granted");
    installFakePush(false);
    expect(await keepPushSubscription()).toBe(false);
    expect(calls).toHaveLength(0);
  });
});
