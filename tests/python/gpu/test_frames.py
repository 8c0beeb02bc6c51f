"""The seed scenario frame after frame, through python/examples/texture_update_bug.py's run():
texture update, render, export, consumer copy, compare with ``img.numpy()``.

``stream`` (the contract) must never give a wrong frame; ``unsafe`` (the old export that
skips the wait) must give some, or this suite could not see the bug it guards against.
Under an unrelated long kernel on another stream, ``stream`` must not wait for it and
``sync`` (a device-wide synchronise) does.
"""

import pytest

CONSUMERS = ["jax", "torch", "torch-side"]


def _row(out, consumer, mode):
    if consumer in out["skipped"]:
        pytest.skip(f"consumer {consumer}: {out['skipped'][consumer]}")
    assert not out["errors"], out["errors"]
    rows = [r for r in out["rows"] + out["contention"] if r.get("consumer") == consumer and r.get("mode") == mode]
    assert rows, out
    for r in rows:
        assert r.get("error") is None, r["error"]
    return rows


@pytest.mark.parametrize("consumer", CONSUMERS)
def test_stream_mode_has_no_wrong_frame_in_200(example, consumer):
    out = example.run(frames=200, spp=128, modes=["stream"], consumers=[consumer], res=512, deadline_s=120)
    (row,) = _row(out, consumer, "stream")
    print(example.format_table(out))
    assert row["frames"] == 200 and not row["incomplete"], row
    assert row["wrong"] == 0, f"{row['wrong']} of 200 frames read a film that was not finished: {row}"


@pytest.mark.parametrize("consumer", CONSUMERS)
def test_unsafe_mode_shows_the_race(example, consumer):
    """The control: without the wait the consumer sees unfinished films."""
    for spp in (256, 1024):  # a longer render widens the window if the GPU was too quick
        out = example.run(frames=30, spp=spp, modes=["unsafe"], consumers=[consumer], res=512, deadline_s=60)
        (row,) = _row(out, consumer, "unsafe")
        print(example.format_table(out))
        if row["wrong"]:
            break
    assert row["wrong"] >= 1, (
        f"skipping the wait never gave a wrong frame ({row}): the test cannot tell a correct export "
        "from a lucky one; render() may be synchronous, or the render stream blocking")


@pytest.mark.parametrize("consumer", ["torch", "jax"])
def test_stream_does_not_wait_for_unrelated_work_and_sync_does(example, consumer):
    out = example.run(frames=0, spp=64, modes=[], consumers=[consumer], res=256, contention=True,
                      contention_frames=8, contention_kernels=["spin"], contention_ms=150.0, deadline_s=60)
    if any("skipped" in r for r in out["contention"]):
        pytest.skip(f"contention kernel: {out['contention'][0]['skipped']}")
    (stream,) = _row(out, consumer, "stream")
    (sync,) = _row(out, consumer, "sync")
    print(example.format_table(out))
    k = stream["kernel_ms"]
    assert stream["wrong"] == 0 and sync["wrong"] == 0, (stream, sync)
    s, y = stream["export_ready_ms"]["median"], sync["export_ready_ms"]["median"]
    assert y > 0.5 * k, f"sync_device() should wait for the {k:.0f} ms kernel, took {y:.1f} ms: is the kernel real?"
    assert s < 0.5 * k, f"the stream-aware export waited {s:.1f} ms for an unrelated {k:.0f} ms kernel"


def test_a_stream_frame_never_waits_for_unrelated_work(example):
    """Texture update + render + export + consumer ready, all under a spin kernel elsewhere:
    nothing on the way may synchronise the device (no more, no less)."""
    out = example.run(frames=0, spp=64, modes=[], consumers=["torch"], res=256, contention=True,
                      contention_frames=8, contention_kernels=["spin"], contention_ms=150.0, deadline_s=60)
    if any("skipped" in r for r in out["contention"]):
        pytest.skip(f"contention kernel: {out['contention'][0]['skipped']}")
    (stream,) = _row(out, "torch", "stream")
    k, f = stream["kernel_ms"], stream["frame_ms"]["median"]
    assert f < 0.5 * k, (f"a whole stream-mode frame took {f:.1f} ms under an unrelated {k:.0f} ms kernel: "
                         "update(), render() or the export synchronises the device")


def test_matmul_contention_is_reported(example):
    """The brief's big matmul: SMs are shared, so only the ordering is asserted."""
    out = example.run(frames=0, spp=64, modes=[], consumers=["torch"], res=256, contention=True,
                      contention_frames=5, contention_kernels=["matmul"], contention_ms=100.0, deadline_s=60)
    if any("skipped" in r for r in out["contention"]):
        pytest.skip(f"contention kernel: {out['contention'][0]['skipped']}")
    (stream,) = _row(out, "torch", "stream")
    (sync,) = _row(out, "torch", "sync")
    print(example.format_table(out))
    assert stream["wrong"] == 0 and sync["wrong"] == 0
    assert stream["export_ready_ms"]["median"] < sync["export_ready_ms"]["median"]
