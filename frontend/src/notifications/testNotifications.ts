import { vi } from "vitest";

/**
 * A stand-in for the browser's `Notification` in tests: records each notification made, and answers the
 * permission prompt with `answer` (what the user would click).
 */
export class FakeNotification {
  static permission: NotificationPermission = "default";
  static answer: NotificationPermission = "granted";
  static made: FakeNotification[] = [];
  static requestPermission = vi.fn(async () => {
    FakeNotification.permission = FakeNotification.answer;
    return FakeNotification.permission;
  });
  onclick: (() => void) | null = null;
  closed = false;

  constructor(
    public title: string,
    public options: NotificationOptions = {},
  ) {
    FakeNotification.made.push(this);
  }

  close() {
    this.closed = true;
  }
}

/** Installs a fresh FakeNotification as `window.Notification` (the test's globals are restored after it). */
export function installFakeNotification(permission: NotificationPermission = "default", answer: NotificationPermission = "granted") {
  FakeNotification.permission = permission;
  FakeNotification.answer = answer;
  FakeNotification.made = [];
  FakeNotification.requestPermission.mockClear();
  vi.stubGlobal("Notification", FakeNotification);
  return FakeNotification;
}
