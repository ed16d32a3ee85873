import { afterEach, describe, expect, it, vi } from "vitest";
import { NOTIFICATIONS_KEY, notificationsState, notify, turnNotificationsOff, turnNotificationsOn } from "./preference";
import { installFakeNotification } from "./testNotifications";

afterEach(() => vi.unstubAllGlobals());

describe("notification preference", () => {
  it("is off until turned on, and asks the browser's permission only then", async () => {
    const Fake = installFakeNotification("default", "granted");
    expect(notificationsState()).toBe("off");
    expect(notify("nothing")).toBeNull();
    expect(Fake.requestPermission).not.toHaveBeenCalled();

    expect(await turnNotificationsOn()).toBe("on");
    expect(Fake.requestPermission).toHaveBeenCalledTimes(1);
    expect(window.localStorage.getItem(NOTIFICATIONS_KEY)).toBe("on");

    turnNotificationsOff();
    expect(notificationsState()).toBe("off");
    expect(await turnNotificationsOn()).toBe("on"); // permission kept: not asked again
    expect(Fake.requestPermission).toHaveBeenCalledTimes(1);
  });

  it("stays off when the user refuses, and says the browser blocks them", async () => {
    installFakeNotification("default", "denied");
    expect(await turnNotificationsOn()).toBe("blocked");
    expect(window.localStorage.getItem(NOTIFICATIONS_KEY)).toBeNull();
    expect(notify("nothing")).toBeNull();
  });

  it("is off when the choice is kept but the browser no longer grants the permission", () => {
    const Fake = installFakeNotification("granted");
    window.localStorage.setItem(NOTIFICATIONS_KEY, "on");
    expect(notificationsState()).toBe("on");
    Fake.permission = "default";
    expect(notificationsState()).toBe("off");
  });

  it("is unsupported without the Notification API", async () => {
    vi.stubGlobal("Notification", undefined);
    expect(notificationsState()).toBe("unsupported");
    expect(await turnNotificationsOn()).toBe("unsupported");
  });

  it("shows a notification with its tag while on, and a click brings the window forward and runs onClick", async () => {
    const Fake = installFakeNotification("granted");
    await turnNotificationsOn();
    const focus = vi.spyOn(window, "focus").mockImplementation(() => undefined);
    const onClick = vi.fn();
    notify("Title", { body: "Body", tag: "t-1", onClick });
    expect(Fake.made.map((n) => [n.title, n.options.body, n.options.tag])).toEqual([["Title", "Body", "t-1"]]);
    Fake.made[0].onclick?.();
    expect(focus).toHaveBeenCalled();
    expect(onClick).toHaveBeenCalled();
    expect(Fake.made[0].closed).toBe(true);
  });
});
