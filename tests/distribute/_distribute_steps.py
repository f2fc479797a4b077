"""Running one step of --distributed on a source, as the driver would."""

from torchport.distribute.detect import Plan


def run(step, source: str, plan: Plan | None = None):
    """(the text the step makes of `source`, its changes as (line, code, operation name) rows)."""
    text, changes = step(source, plan or Plan(entry=True), None)
    return text, [(c.start_line, c.code, c.operation.value) for c in changes]


def messages(step, source: str, plan: Plan | None = None) -> list[str]:
    return [c.message for c in step(source, plan or Plan(entry=True), None)[1]]
