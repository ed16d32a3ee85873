// Being built in this session (issue #5).
export default function QueuePage() {
  return <h1>Queue</h1>;
}
