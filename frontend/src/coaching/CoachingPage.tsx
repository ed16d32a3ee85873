import { useParams } from "react-router-dom";
import { CoachingPanel } from "./CoachingPanel";

/** `/executions/:id/coach`: the CoachingPanel of one execution (a fresh panel per execution). */
export default function CoachingPage() {
  const { id = "" } = useParams<{ id: string }>();
  return <CoachingPanel key={id} executionId={id} />;
}
