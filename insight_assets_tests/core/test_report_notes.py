"""The notes every report carries about who judged and which roles an offline stand-in played."""

from insight_assets.core.runtime.stage_output import judge_note, standin_note


def test_a_judge_that_wrote_the_texts_is_called_self_judged():
    note = judge_note("local/SmolLM2-135M-Instruct.Q4_1", "local/SmolLM2-135M-Instruct.Q4_1", "lexical")
    assert "self-judged" in note and "local/SmolLM2-135M-Instruct.Q4_1" in note
    apart = judge_note(
        "openai/gpt-4o-mini", "local/SmolLM2-135M-Instruct.Q4_1, offline (extractive)", "lexical"
    )
    assert "self-judged" not in apart and "apart from the writer" in apart
    assert judge_note("offline (extractive)", "offline (extractive)", "lexical stand-ins").endswith(
        "lexical stand-ins"
    )


def test_every_role_an_offline_stand_in_played_is_named():
    roles = {
        "planner": "offline (extractive)",
        "writer": "local/SmolLM2-135M-Instruct.Q4_1, offline (extractive)",
        "judge": "openai/gpt-4o-mini",
    }
    note = standin_note(roles)
    assert note is not None and "planner, writer" in note and "judge" not in note.split("(")[0]
    assert standin_note({"writer": "openai/gpt-4o-mini", "judge": "openai/gpt-4o-mini"}) is None
