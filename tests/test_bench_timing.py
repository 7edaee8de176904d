"""The bench's stream timing: several short streams between one pair of
clock reads (the clock's own cost kept out), each stream made before the
clocks start and fed whole, once."""
import pytest

from sglang_toolparse.bench import runner
from sglang_toolparse.bench.common import Policy
from sglang_toolparse.bench.sides import Side


def counting_side(log):
    def start():
        i = len([e for e in log if e[0] == "start"])
        log.append(("start", i))

        def feed(c):
            log.append(("feed", i, c))
            return []

        def end():
            log.append(("end", i))
            return []

        return feed, end

    return Side("standalone", start)


def test_streams_are_made_first_then_each_fed_whole_once():
    log = []
    w, c = runner.run_streams(counting_side(log), ["a", "b"], 3)
    assert w >= 0 and c >= 0
    assert log[:3] == [("start", 0), ("start", 1), ("start", 2)]
    assert log[3:] == [("feed", 0, "a"), ("feed", 0, "b"), ("end", 0),
                       ("feed", 1, "a"), ("feed", 1, "b"), ("end", 1),
                       ("feed", 2, "a"), ("feed", 2, "b"), ("end", 2)]


def test_streams_per_sample_is_bounded():
    assert runner.streams_per_sample(0) == runner.MAX_STREAMS
    assert runner.streams_per_sample(10**9) == 1
    assert runner.streams_per_sample(runner.SAMPLE_NS // 4) == 4


def test_measure_reports_streams_per_rep_and_per_chunk_time():
    log = []
    stats, text, calls = runner.measure(counting_side(log), ["x"] * 4, Policy(1.0, 2, 2))
    assert stats["reps"] == 2
    k = stats["streams_per_rep"]
    assert 1 <= k <= runner.MAX_STREAMS
    # one collected stream, then two samples of k streams each
    assert len([e for e in log if e[0] == "start"]) == 1 + 2 * k
    assert len([e for e in log if e[0] == "feed"]) == 4 * (1 + 2 * k)
    assert stats["us_per_chunk_min"] * 4 * 1e3 == pytest.approx(stats["total_ms_min"] * 1e6)


def test_one_shot_sides_are_timed_in_turn():
    from sglang_toolparse.bench import oneshot

    log = []

    def side(name):
        def parse(text):
            log.append(name)
            return text, []
        return parse

    stats = oneshot.time_parses({"a": side("a"), "b": side("b")}, "x", Policy(0.0, 3, 3), sample_ns=1)
    assert set(stats) == {"a", "b"} and all(s["reps"] == 3 for s in stats.values())
    # after one call each to size the samples (1 parse per sample here), a, b, a, b, a, b
    assert log == ["a", "b"] + ["a", "b"] * 3


def test_a_one_shot_side_that_raises_is_reported_and_the_others_timed():
    from sglang_toolparse.bench import oneshot

    calls = {"n": 0}

    def flaky(text):
        calls["n"] += 1
        if calls["n"] > 1:
            raise ValueError("boom")
        return text, []

    stats = oneshot.time_parses({"ok": lambda t: (t, []), "flaky": flaky}, "x", Policy(0.0, 2, 2), sample_ns=1)
    assert stats["flaky"] == {"error": "ValueError: boom"}
    assert stats["ok"]["reps"] == 2


def test_one_shot_times_the_parse_and_reads_its_result_outside():
    """A one-shot side's timed call ends with the side's own result; the
    calls are read out of it (into tuples, for the check against the ground
    truth) by Side.read, which run_oneshot calls outside the timed part."""
    from sglang_toolparse.bench import corpus, oneshot
    from sglang_toolparse.bench.sides import Format

    fmt = Format("kimi_k2_native", "kimi_k2", "kimi_k2", ())
    sides = oneshot.make_parsers(fmt, None, None)
    side = sides["standalone"]
    case = corpus.render_case(corpus.make_scenario("chat"), "kimi_k2")
    got = side.parse(case.text)
    assert type(got) is not tuple  # the parser's own ParseResult
    text, calls = side.read(got)
    assert text == case.expected_text and [n for n, _ in calls] == [n for n, _ in case.expected_calls]


def test_one_shot_targets_leave_out_replies_the_builtin_gets_wrong():
    """The every-reply target compares only replies whose calls SGLang's
    builtin returns right: a builtin that returns no calls (fast, wrong)
    is no baseline; the note names the replies left out."""
    from sglang_toolparse.bench import oneshot

    def row(scenario, native, sglang, calls="ok"):
        return {"format": "f_native", "scenario": scenario,
                "sides": {"native": {"cpu_us_min": native, "wall_us_min": native},
                          "sglang": {"cpu_us_min": sglang, "wall_us_min": sglang, "calls": calls}}}

    rows = [row("chat", 4.0, 10.0), row("bursts3", 9.0, 10.0), row("calls10", 16.0, 12.0, "diff")]
    got = {t["target"]: t for t in oneshot.oneshot_targets(rows, "cpu")}
    every = got["one-shot, every reply: native / SGLang"]
    assert every["met"] and every["value"] == 0.9 and "calls10" in every["note"]
    assert got["one-shot chat: native / SGLang"]["value"] == 0.4
    rows[0] = row("chat", 4.0, 10.0, "diff")
    chat = {t["target"]: t for t in oneshot.oneshot_targets(rows, "cpu")}["one-shot chat: native / SGLang"]
    assert chat["value"] is None and chat["met"] is None and "not compared" in chat["note"]
    rows[0] = row("chat", 4.0, 10.0)
    rows[2] = row("calls10", 16.0, 12.0, "json")  # same value, other spacing: a baseline
    every = {t["target"]: t for t in oneshot.oneshot_targets(rows, "cpu")}["one-shot, every reply: native / SGLang"]
    assert not every["met"] and "calls10" in every["note"] and "not compared" not in every["note"]
