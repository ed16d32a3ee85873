import type { ReactNode } from "react";

/** A button that opens a dialog (a confirmation, a form): it says so to assistive tech with aria-haspopup. */
export function DialogButton({
  className = "button button--secondary",
  label,
  onOpen,
  children,
}: {
  className?: string;
  /** Its accessible name, where the visible text needs the row's subject ("Revoke token nightly"). */
  label?: string;
  onOpen: () => void;
  children: ReactNode;
}) {
  return (
    <button type="button" className={className} aria-haspopup="dialog" aria-label={label} onClick={onOpen}>
      {children}
    </button>
  );
}
