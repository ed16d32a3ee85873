import { useEffect, useId, useRef, type KeyboardEvent, type ReactNode } from "react";
import { createPortal } from "react-dom";
import "./Dialog.css";

const FOCUSABLE =
  "a[href], button:not([disabled]), input:not([disabled]):not([type='hidden']), select:not([disabled]), " +
  "textarea:not([disabled]), [tabindex]:not([tabindex='-1'])";

function focusables(root: HTMLElement): HTMLElement[] {
  return [...root.querySelectorAll<HTMLElement>(FOCUSABLE)].filter((el) => !el.closest("[hidden], [inert]"));
}

/**
 * The app's one modal dialog, for the operator and the lead side: rendered
 * over the page (in a portal on `document.body`); focus moves into it when it
 * opens (to `initialFocus`, else its first field or control) and back to where
 * it was when it closes (to the page's `#main` when that control is gone);
 * Tab stays inside; Esc and a click on the backdrop close it. While one is
 * open, the coaching page's shortcuts are off (see `useShortcuts`).
 */
export function Dialog({
  title,
  onClose,
  children,
  initialFocus,
  describedBy,
  closeButton = true,
  wide = false,
}: {
  title: ReactNode;
  /** Esc, the backdrop and the Close button call it. */
  onClose: () => void;
  children: ReactNode;
  /** A CSS selector inside the dialog for the element to focus first (default: its first field). */
  initialFocus?: string;
  /** The id of the element that describes the dialog (`aria-describedby`). */
  describedBy?: string;
  /** The "Close Esc" button in the head; off where the dialog's own actions include a Cancel. */
  closeButton?: boolean;
  wide?: boolean;
}) {
  const ref = useRef<HTMLDivElement>(null);
  const titleId = useId();
  const onCloseRef = useRef(onClose);
  onCloseRef.current = onClose;

  useEffect(() => {
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    const root = ref.current;
    if (root) {
      const first =
        root.querySelector<HTMLElement>(initialFocus ?? "input:not([type='hidden']), textarea, select") ??
        focusables(root)[0] ??
        root;
      first.focus();
    }
    return () => {
      // Back to the control that opened the dialog, or to the page when it is gone.
      const target = opener && opener.isConnected && opener !== document.body ? opener : document.getElementById("main");
      target?.focus();
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps -- focus moves once, when the dialog opens
  }, []);

  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    if (event.key === "Escape") {
      event.stopPropagation();
      event.preventDefault();
      onCloseRef.current();
      return;
    }
    if (event.key !== "Tab" || !ref.current) return;
    const items = focusables(ref.current);
    if (items.length === 0) {
      event.preventDefault();
      return;
    }
    const first = items[0];
    const last = items[items.length - 1];
    const active = document.activeElement;
    if (event.shiftKey && (active === first || !ref.current.contains(active))) {
      event.preventDefault();
      last.focus();
    } else if (!event.shiftKey && (active === last || !ref.current.contains(active))) {
      event.preventDefault();
      first.focus();
    }
  };

  const heading = (
    <h2 id={titleId} className="dialog__title">
      {title}
    </h2>
  );

  return createPortal(
    <div className="dialog-backdrop" onMouseDown={(e) => e.target === e.currentTarget && onCloseRef.current()}>
      <div
        ref={ref}
        className={`dialog${wide ? " dialog--wide" : ""}`}
        role="dialog"
        aria-modal="true"
        aria-labelledby={titleId}
        aria-describedby={describedBy}
        tabIndex={-1}
        onKeyDown={onKeyDown}
      >
        {closeButton ? (
          <div className="dialog__head">
            {heading}
            <button type="button" className="button button--secondary dialog__close" onClick={() => onCloseRef.current()}>
              Close <kbd>Esc</kbd>
            </button>
          </div>
        ) : (
          heading
        )}
        {children}
      </div>
    </div>,
    document.body,
  );
}
