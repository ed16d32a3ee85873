// Being built in this session (issue #5).
export default function WorkflowDetailPage() {
  return <h1>WorkflowDetailPage</h1>;
}
