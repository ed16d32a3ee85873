// Being built in this session (issue #5).
export default function AuditPage() {
  return <h1>AuditPage</h1>;
}
