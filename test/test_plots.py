"""The figures a person would rather look at than read (issue 46, item 7), one style
(``apps/plots.py``): ``excite --plot`` (the motion and how much of each limit it uses), ``demo
cartesian --plot`` (the path drawn against the one commanded), ``demo drive --plot`` (each drive's
error and command rate against its limit) and ``demo identify``'s tracking error before and after.
Each is drawn here from data whose content is known, its axes read from the figure, then saved and
opened again with matplotlib's image reader: the size asked for, and not blank. The demos' own
runs check the file they write (test_*_demo.py)."""
import argparse
import warnings

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")

from robodyn_ros.apps import plots  # noqa: E402
from robodyn_ros.dynamics import RobotModel, shipped  # noqa: E402


def assert_png(path, width, height):
    """The PNG at ``path`` opens, is ``width`` x ``height`` pixels and shows something: lines in
    several colours on the white, not one colour or a few dots."""
    from matplotlib.image import imread

    image = imread(path)
    assert image.shape[:2] == (height, width), image.shape
    rgb = image[..., :3].reshape(-1, 3)
    drawn = np.any(rgb < 0.9, axis=1)
    assert 0.01 < drawn.mean() < 0.9, drawn.mean()
    assert len(np.unique(np.round(rgb[drawn] * 8), axis=0)) >= 4     # lines in several colours


def labels(fig):
    return [(ax.get_xlabel(), ax.get_ylabel()) for ax in fig.axes]


@pytest.fixture(scope="module")
def puma():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return RobotModel.from_urdf(shipped("puma560"))


def test_the_style_is_one_module_and_every_figure_is_its_size(tmp_path):
    fig, axes = plots.figure(2, 3, size=(6.0, 4.0), title="t")
    assert axes.shape == (2, 3)
    axes[0, 0].plot([0, 1], [0, 1], **plots.REFERENCE)
    for k, ax in enumerate(axes.flat):
        ax.plot([0, 1], [k, -k])
    assert_png(plots.save(fig, tmp_path / "sub" / "f.png"), 660, 440)


def test_excite_draws_the_motion_and_its_use_of_each_limit(puma, tmp_path):
    from robodyn_ros.apps.excite import usage_figure
    from robodyn_ros.identification.excitation import FourierSeries, limit_usage

    free = 0.05 * np.random.default_rng(0).normal(size=(6, 8))
    series = FourierSeries.from_free(puma.joint_names, np.zeros(6), 10.0, free)
    fig = usage_figure(puma, series, 10.0, 0.1)
    ys = [y for _, y in labels(fig)]
    assert [y.split("\n")[0] for y in ys] == ["position", "velocity", "acceleration", "effort",
                                              "largest use"]
    assert all("fraction of limit" in y for y in ys) and labels(fig)[3][0] == "t (s)"
    bars = fig.axes[-1].patches
    used = limit_usage(puma, series, 10.0)
    np.testing.assert_allclose([b.get_height() for b in bars],
                               np.concatenate([used[k] for k in used]), rtol=1e-12)
    assert_png(plots.save(fig, tmp_path / "excite.png"), 990, 1210)


def test_demo_identify_draws_the_error_before_and_after(tmp_path):
    from robodyn_ros.apps.demos.identify import plot

    t = np.linspace(0.0, 4.0, 400)
    runs = [{"label": "nominal model", "t": t, "error": 1e-2 * np.sin(np.outer(t, np.arange(1, 7)))},
            {"label": "identified model", "t": t, "error": 1e-5 * np.cos(np.outer(t, np.arange(1, 7)))}]
    plot(runs, tmp_path / "tracking_error.png")
    assert_png(tmp_path / "tracking_error.png", 1540, 770)


def test_demo_cartesian_draws_the_path_drawn_against_the_commanded(tmp_path):
    from robodyn_ros.apps.demos.cartesian import plot

    t = np.linspace(0.0, 4.5, 450)
    circle = 0.1 * np.column_stack([np.cos(t) - 1.0, np.sin(t)])
    results = [{"arm": arm, "law": law, "trace": {
        "t": t, "commanded": circle, "drawn": circle + error * np.column_stack([np.sin(3 * t)] * 2),
        "position_error": error * np.abs(np.sin(3 * t)) + 1e-9}}
        for arm in ("puma560", "panda") for law, error in (("operational_space", 5e-5),
                                                          ("cartesian_impedance", 3e-3))]
    args = argparse.Namespace(path="circle", size=0.1, duration=4.0)
    plot(results, tmp_path / "cartesian.png", args)
    assert_png(tmp_path / "cartesian.png", 1210, 990)


def test_demo_drive_draws_each_drives_error_and_command_rate(tmp_path):
    from robodyn_ros.apps.demos.drive import RATE, figure

    t = np.arange(0.0, 5.6, 1e-3)
    table = {law: {name: {"trace": {"error": scale * (1.0 + np.sin(t[:5100])),
                                    "rate": 0.8 * RATE * np.abs(np.sin(5 * t[1:]))}}
                       for name, scale in (("plain effort drive", 1e-4), ("drive, no drive_compensates", 1e-1))}
             for law in ("computed_torque", "operational_space")}
    fig = figure(table)
    assert labels(fig)[0] == ("", "max over joints |q_d - q| (rad)")
    assert labels(fig)[2][1] == "max over joints |du/dt| (N m/s)"
    assert [ax.get_title() for ax in fig.axes[:2]] == list(table)
    assert_png(plots.save(fig, tmp_path / "drive.png"), 1430, 825)
