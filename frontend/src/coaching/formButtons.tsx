/**
 * rjsf's buttons with words: its own are Bootstrap glyph icons, which this app does not load, so "add a field"
 * to an object (headers, query params) and "remove" showed as empty boxes. Each says what it does.
 */
import type { IconButtonProps, TemplatesType } from "@rjsf/utils";

function TextButton({ label, danger = false, ...props }: IconButtonProps & { label: string; danger?: boolean }) {
  const { id, onClick, disabled, title } = props;
  return (
    <button
      type="button"
      id={id}
      className={`button button--secondary button--small${danger ? " button--danger" : ""}`}
      onClick={onClick}
      disabled={disabled}
      title={title}
    >
      {label}
    </button>
  );
}

export const FORM_BUTTONS: Partial<TemplatesType["ButtonTemplates"]> = {
  AddButton: (props) => (
    <p className="form-add">
      <TextButton {...props} label="+ Add a field" />
    </p>
  ),
  RemoveButton: (props) => <TextButton {...props} label="Remove" danger />,
  MoveUpButton: (props) => <TextButton {...props} label="Up" />,
  MoveDownButton: (props) => <TextButton {...props} label="Down" />,
  CopyButton: (props) => <TextButton {...props} label="Copy" />,
};
