// Being built in this session (issue #5).
export default function DashboardPage() {
  return <h1>DashboardPage</h1>;
}
