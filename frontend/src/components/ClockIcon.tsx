/**
 * A small clock, drawn: the emoji "stopwatch" and "hourglass" (U+23F1, U+231B) have no glyph in Debian's fonts (DejaVu), where Chromium showed an
 * empty box. Decorative only: the text beside it says what it means.
 */
export function ClockIcon() {
  return (
    <svg className="icon" data-icon="clock" aria-hidden="true" focusable="false" width="1em" height="1em"
      viewBox="0 0 16 16" fill="none" stroke="currentColor" strokeWidth="1.6" strokeLinecap="round">
      <circle cx="8" cy="8.5" r="6" />
      <path d="M8 5.5v3l2 1.5M6.5 1.5h3" />
    </svg>
  );
}
