// The planner: every cohort question goes through `answer`, which asks the
// evaluators in order (the cohort index, then Trino when one is configured,
// then SQL on the embedded engine) and returns the first answer. A service never names an evaluator. Which one answered is counted
// per question, for /metrics and tests.

import { indexEvaluator } from './index-evaluator.ts';
import { sqlEvaluator } from './sql-evaluator.ts';
import { trinoEvaluator } from './trino-evaluator.ts';
import type { CohortAnswers, CompleteEvaluator, PartialEvaluator, Question } from './questions.ts';

// Trino (when configured and serving this release) answers what the index cannot, before DuckDB.
const PARTIAL: readonly PartialEvaluator[] = [indexEvaluator, trinoEvaluator];
const LAST: CompleteEvaluator = sqlEvaluator;

/** Answers given since start, by evaluator and question. */
const answered = new Map<string, number>();

export function plannerStats(): { evaluator: string; question: Question; answers: number }[] {
  return [...answered].map(([k, answers]) => {
    const [evaluator, question] = k.split(' ') as [string, Question];
    return { evaluator, question, answers };
  });
}

function count(evaluator: string, q: Question): void {
  const k = `${evaluator} ${q}`;
  answered.set(k, (answered.get(k) ?? 0) + 1);
}

type Answer<Q extends Question> = Awaited<ReturnType<CohortAnswers[Q]>>;
type Ask<Q extends Question> = (...args: Parameters<CohortAnswers[Q]>) => Promise<Answer<Q> | null>;

/** The answer to question `q` about `args`, from the first evaluator that can give it. */
export async function answer<Q extends Question>(q: Q, ...args: Parameters<CohortAnswers[Q]>): Promise<Answer<Q>> {
  for (const ev of PARTIAL) {
    let a: Answer<Q> | null;
    try {
      a = await (ev[q] as Ask<Q>)(...args);
    } catch (e) {
      // An evaluator that lost its data mid-answer (the cohort index's file changed under it) says so: the next one answers.
      if ((e as { askElsewhere?: boolean }).askElsewhere === true) continue;
      throw e;
    }
    if (a !== null) {
      count(ev.name, q);
      return a;
    }
  }
  count(LAST.name, q);
  return (LAST[q] as Ask<Q>)(...args) as Promise<Answer<Q>>;
}

/** Which evaluator answers `q` for these arguments now (a test's and an operator's question), without keeping the answer. */
export async function evaluatorFor<Q extends Question>(q: Q, ...args: Parameters<CohortAnswers[Q]>): Promise<string> {
  for (const ev of PARTIAL) if ((await (ev[q] as Ask<Q>)(...args)) !== null) return ev.name;
  return LAST.name;
}
