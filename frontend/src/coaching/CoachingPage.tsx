// Being built in this session (issue #5).
export default function CoachingPage() {
  return <h1>CoachingPage</h1>;
}
