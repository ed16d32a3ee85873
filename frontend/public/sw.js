/*
 * Coach's service worker (served at /sw.js, scope /): shows the Web Push messages the server sends
 * (services/notifications/push.py: {title, body, url, tag, kind}) and, on a click, focuses a Coach tab already at
 * the item or opens one there. The tag is the event's id: a repeat of the same event replaces the notification
 * shown instead of stacking a second one. When the browser replaces the push subscription (it may, on its own), the
 * worker subscribes again with the same key and tells the open Coach tabs, which send the new one to the server (the
 * worker cannot: the API wants the page's CSRF token); with no tab open, the next page load sends it.
 * Plain JavaScript, outside the app's bundle: the browser fetches it itself.
 */
self.addEventListener("install", () => {
  self.skipWaiting();
});

self.addEventListener("activate", (event) => {
  event.waitUntil(self.clients.claim());
});

function messageOf(event) {
  if (!event.data) return {};
  try {
    return event.data.json();
  } catch {
    return { body: event.data.text() };
  }
}

self.addEventListener("push", (event) => {
  const message = messageOf(event);
  const title = message.title || "Coach";
  event.waitUntil(
    self.registration.showNotification(title, {
      body: message.body || "",
      tag: message.tag || undefined,
      renotify: Boolean(message.tag),
      data: { url: message.url || "/", kind: message.kind || null },
    }),
  );
});

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const path = (event.notification.data && event.notification.data.url) || "/";
  const target = new URL(path, self.location.origin);
  if (target.origin !== self.location.origin) return; // only Coach's own pages
  event.waitUntil(
    (async () => {
      const windows = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
      const there = windows.find((client) => client.url === target.href);
      if (there) return there.focus();
      const ours = windows.find((client) => new URL(client.url).origin === target.origin && "navigate" in client);
      if (ours) {
        await ours.focus();
        return ours.navigate(target.href);
      }
      return self.clients.openWindow(target.href);
    })(),
  );
});

self.addEventListener("pushsubscriptionchange", (event) => {
  event.waitUntil(
    (async () => {
      const options = event.oldSubscription && event.oldSubscription.options;
      if (!event.newSubscription && options && options.applicationServerKey) {
        await self.registration.pushManager.subscribe({
          userVisibleOnly: true,
          applicationServerKey: options.applicationServerKey,
        });
      }
      const windows = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
      for (const client of windows) client.postMessage({ type: "coach:push-subscription-changed" });
    })(),
  );
});
