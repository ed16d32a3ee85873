// Being built in this session (issue #5).
export default function CorrectionPacksPage() {
  return <h1>CorrectionPacksPage</h1>;
}
