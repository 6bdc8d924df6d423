"""Tape semantics (LANGUAGE.md §4), checked against values TensorFlow gives for the same programs."""
import numpy as np
import pytest

from conftest import run_program, value
from tapecli.errors import TapeError, TdfValueError


def test_recording_rule_only_watched_inputs():
    r = run_program("""
        var x = 2.0
        const c = 5.0
        tape t(persistent=True):
            y = c * c          # no watched input: not recorded
            z = x * c
        gy = t.gradient(y, c)
        gz = t.gradient(z, x)
    """)
    assert value(r, "gy") is None
    assert value(r, "gz") == 5.0
    assert len(r.tapes[0].records) == 1


def test_trainable_variables_are_watched_when_read_in_scope():
    r = run_program("""
        var a = 1.0
        var b = 2.0
        var(trainable=False) c = 3.0
        tape t:
            y = a * c
        vs = t.watched_variables()
    """)
    assert [v.name for v in r.scope.vars["vs"]] == ["a"]


def test_watch_accessed_variables_false_watches_only_explicit():
    r = run_program("""
        var a = 1.0
        var b = 2.0
        tape t(watch_accessed_variables=False, persistent=True):
            watch b
            y = a * b
        ga = t.gradient(y, a)
        gb = t.gradient(y, b)
    """)
    assert value(r, "ga") is None
    assert value(r, "gb") == 1.0


def test_non_persistent_second_call_names_first_line():
    with pytest.raises(TapeError) as e:
        run_program("""
            var x = 1.0
            tape t:
                y = x * x
            g1 = t.gradient(y, x)
            g2 = t.gradient(y, x)
        """)
    assert "line 4" in e.value.message and e.value.line == 5


def test_persistent_tape_answers_many_calls_and_gradient_inside_scope_warns():
    r = run_program("""
        var x = 3.0
        tape t(persistent=True):
            y = x * x
            g_inside = t.gradient(y, x)
        g_after = t.gradient(y, x)
    """)
    assert value(r, "g_inside") == 6.0 and value(r, "g_after") == 6.0
    assert any("costs memory" in w["message"] for w in r.warnings)


def test_gradient_inside_non_persistent_scope_stops_recording():
    r = run_program("""
        var x = 3.0
        tape t:
            y = x * x
            g = t.gradient(y, x)
            z = y * x
    """)
    assert value(r, "g") == 6.0
    assert len(r.tapes[0].records) == 1      # z was not recorded


def test_nested_tapes_third_derivative():
    r = run_program("""
        var x = 2.0
        tape t1:
            tape t2:
                tape t3:
                    y = x ** 4
                d1 = t3.gradient(y, x)
            d2 = t2.gradient(d1, x)
        d3 = t1.gradient(d2, x)
    """)
    assert (value(r, "d1"), value(r, "d2"), value(r, "d3")) == (32.0, 48.0, 48.0)


def test_second_derivative_of_relu_is_zero_not_none():
    r = run_program("""
        const x = [-1.0, 2.0]
        tape outer:
            watch x
            tape inner:
                watch x
                y = sum(relu(x) + abs(x) + leaky_relu(x))
            g = inner.gradient(y, x)
        h = outer.gradient(g, x)
    """)
    assert value(r, "g") == [pytest.approx(-1 + 0.2), 3.0]
    assert value(r, "h") == [0.0, 0.0]


def test_sign_has_a_zero_gradient():
    """TensorFlow's SignGrad is zeros_like(x): the path is there and the gradient is 0, not None."""
    r = run_program("""
        var x = 2.0
        tape t:
            y = sign(x) * 3.0
        g = t.gradient(y, x)
    """)
    assert value(r, "g") == 0.0


@pytest.mark.parametrize("op", ["floor(x)", "round(x)", "ceil(x)", "cast(x, int32)", "x // 1.0",
                                "cast(x > 1.0, float32)", "stop_gradient(x)"])
def test_non_differentiable_ops_cut_the_path(op):
    r = run_program(f"""
        var x = 2.5
        tape t:
            y = {op}
        g = t.gradient(y, x)
    """)
    assert value(r, "g") is None


def test_output_gradients_and_summed_targets():
    r = run_program("""
        const x = [1.0, 2.0]
        tape t(persistent=True):
            watch x
            y = x * x
            z = x * 3.0
        g = t.gradient(y, x, output_gradients=[10.0, 100.0])
        both = t.gradient([y, z], x)
        d = t.gradient({"a": y, "b": z}, {"x": x})
    """)
    assert value(r, "g") == [20.0, 400.0]
    assert value(r, "both") == [5.0, 7.0]
    assert value(r, "d") == {"x": [5.0, 7.0]}


def test_unconnected_zero_and_bad_value():
    r = run_program("""
        var x = [1.0, 2.0]
        var y = 3.0
        tape t(persistent=True):
            z = y * y
        g = t.gradient(z, x, unconnected_gradients="zero")
    """)
    assert value(r, "g") == [0.0, 0.0]
    with pytest.raises(TdfValueError):
        run_program("""
            var y = 3.0
            tape t:
                z = y * y
            g = t.gradient(z, y, unconnected_gradients="nonsense")
        """)


def test_stop_recording_requires_recording_tape():
    with pytest.raises(TapeError):
        run_program("""
            var x = 1.0
            tape t:
                y = x
            stop_recording t:
                z = x * 2.0
        """)


def test_reset_forgets_records_and_watched_variables():
    r = run_program("""
        var x = 2.0
        var w = 5.0
        tape t:
            a = w * x
            reset t
            b = x * x
            c = a + b
        vs = t.watched_variables()
        g = t.gradient(c, [x, w])
    """)
    assert [v.name for v in r.scope.vars["vs"]] == ["x"]
    assert value(r, "g") == [4.0, None]


def test_jacobian_and_batch_jacobian_shapes():
    r = run_program("""
        const x = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
        tape t(persistent=True):
            watch x
            y = x * x
            s = sum(x, axis=1)
        j = t.jacobian(y, x)
        bj = t.batch_jacobian(y, x)
        js = t.jacobian(s, x)
    """)
    j = np.array(value(r, "j"))
    assert j.shape == (2, 3, 2, 3)
    assert j[1, 2, 1, 2] == 12.0 and j[1, 2, 0, 2] == 0.0
    bj = np.array(value(r, "bj"))
    assert bj.shape == (2, 3, 3)
    np.testing.assert_array_equal(bj[1], np.diag([8.0, 10.0, 12.0]))
    np.testing.assert_array_equal(np.array(value(r, "js")), [[[1, 1, 1], [0, 0, 0]], [[0, 0, 0], [1, 1, 1]]])


def test_jacobian_is_recorded_by_an_outer_tape():
    # The target must be computed inside the outer scope to be recorded there.
    r = run_program("""
        const x = [1.0, 2.0]
        tape outer:
            watch x
            tape inner:
                watch x
                y = x ** 3
            j = inner.jacobian(y, x)
            s = sum(j)
        h = outer.gradient(s, x)
    """)
    assert value(r, "h") == [6.0, 12.0]


def test_state_stops_gradients():
    r = run_program("""
        var x0 = 3.0
        var x1 = 0.0
        tape t(persistent=True):
            x1.assign_add(x0)
            y = x1 ** 2
        g0 = t.gradient(y, x0)
        g1 = t.gradient(y, x1)
    """)
    assert value(r, "g0") is None
    assert value(r, "g1") == 6.0


def test_variable_read_before_and_after_assign_both_contribute():
    r = run_program("""
        var v = 2.0
        tape t:
            a = v * v
            v.assign(5.0)
            b = a + v * v
        g = t.gradient(b, v)
    """)
    assert value(r, "g") == 14.0      # 2*2 + 2*5, like TensorFlow's ReadVariableOp records


def test_custom_gradient_with_two_arguments_and_none():
    r = run_program("""
        @custom_gradient
        def f(a, b):
            y = a * b
            def backward(dy):
                return [dy * 10.0, None]
            return y, backward
        var a = 2.0
        var b = 3.0
        tape t:
            y = f(a, b)
        g = t.gradient(y, [a, b])
    """)
    assert value(r, "g") == [10.0, None]


def test_a_tape_block_leaves_the_tapes_as_they_were_after_an_exception():
    """runtime/tape.recording: blocks raise inside nested tapes, one of them paused and one entered alone
    (custom_gradient's case); each exit restores what its entry changed."""
    from tapecli.runtime.context import run_context
    from tapecli.runtime.tape import Tape, paused, recording
    outer, inner, alone = Tape("outer"), Tape("inner"), Tape("alone")
    with run_context(explain=True) as ctx:
        with recording(outer, noted=True):
            with paused(outer, 2):
                with pytest.raises(ValueError):
                    with recording(inner, noted=True):
                        with pytest.raises(ValueError):
                            with recording(alone, alone=True):
                                assert ctx.tapes == [outer, inner, alone]
                                assert [t.paused for t in ctx.tapes] == [True, True, False]
                                raise ValueError("in the block")
                        assert ctx.tapes == [outer, inner] and inner.recording and not alone.open
                        inner.paused = True            # (as a non-persistent tape's gradient inside its block)
                        raise ValueError("in the block")
                assert ctx.tapes == [outer] and outer.paused and outer.open
                assert not inner.open and not inner.paused
            assert outer.recording
            with recording(outer):          # an open tape stays where it is, unpaused for the block
                assert ctx.tapes == [outer]
            assert outer.open and ctx.tapes == [outer]
        assert ctx.tapes == [] and not outer.open
        history = ctx.provenance.tapes
        assert history[id(inner)].closed is not None and id(alone) not in history


def test_reopening_a_closed_tape_restores_its_pause():
    from tapecli.runtime.context import run_context
    from tapecli.runtime.tape import Tape, recording
    tape = Tape("t", persistent=True)
    tape.paused = True
    with run_context() as ctx:
        with pytest.raises(KeyError):
            with recording(tape):
                assert tape.recording and ctx.tapes == [tape]
                raise KeyError("x")
        assert ctx.tapes == [] and not tape.open and tape.paused


def test_the_op_stream_reaches_each_observer_of_the_run():
    """RunContext.observers: empty in a plain run; ops.apply, a variable's read under a tape and the backward
    sweep call each observer's hook (runtime/observers.py), in the list's order."""
    from tapecli import ops
    from tapecli.autodiff.gradients import gradient
    from tapecli.runtime.context import run_context
    from tapecli.runtime.observers import Observer
    from tapecli.runtime.tape import Tape, recording
    from tapecli.runtime.values import Tensor, Variable

    class Seen(Observer):
        def __init__(self, name, seen):
            self.name, self.seen = name, seen

        def applied(self, op, inputs, output, line, tapes):
            self.seen.append((self.name, "applied", op.name, len(tapes)))

        def read(self, var, tapes, line):
            self.seen.append((self.name, "read", var.name, len(tapes)))

        def backward(self, record, g, input_grads):
            self.seen.append((self.name, "backward", record.op.name, len(input_grads)))

    with run_context() as plain:
        assert plain.observers == []
    with run_context(explain=True, check_numerics=True) as ctx:
        assert ctx.observers == [ctx.provenance, ctx.numerics]
        seen = []
        ctx.observers[:] = [Seen("a", seen), Seen("b", seen)]
        v = Variable("v", np.float32(3.0))
        tape = Tape("t")
        with recording(tape):
            y = ops.mul(v, Tensor(np.float32(2.0)))
        seen_forward = list(seen)
        del seen[:]
        gradient(tape, y, [v])
    assert seen_forward == [("a", "read", "v", 1), ("b", "read", "v", 1),
                            ("a", "applied", "mul", 1), ("b", "applied", "mul", 1)]
    assert [s for s in seen if s[1] == "backward"] == [("a", "backward", "mul", 2), ("b", "backward", "mul", 2)]
