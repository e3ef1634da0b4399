"""Logs of any rate (issue 45, item 4): from a UR driver's 94 Hz to a Panda's 1 kHz, with stamps
of 1 ms resolution taken when each sample arrives (up to a period late), samples lost now and
then (intervals up to 34 ms), and at 1 kHz a fifth of the stamps repeating the one before (the
bag reader keeps the first). The processing follows the run: the cut-off chosen between twice and
forty times the motion's bandwidth and at most a fifth of the sample rate, the longest gap
bridged what a straight line bridges at that bandwidth and at least four intervals.

The arm is the identification demo's PUMA 560 plant (no Coulomb friction) moving along a Fourier
series of 2.5 s period (harmonics up to 2 Hz) for 40 s, torque noise 0.5 N m; each log is written
to a rosbag2 and read back. Every base parameter comes back within 4 of its own standard
deviations (the package before this change split the 100 Hz log at each of its 12 lost-sample
intervals over 20 ms and regressed 89 % of its states).
"""
import numpy as np
import pytest

from robodyn_ros.identification import standard_parameters
from robodyn_ros.identification.bag import read_joint_states, write_joint_states
from robodyn_ros.identification.identify import identify
from robodyn_ros.identification.processing import GAP_INTERVALS, MAX_CUTOFF_PER_RATE
from robodyn_ros.identification.synthetic import logged_run

START = np.radians([90, 0, 90, 0, 0, 0])
SECONDS, PERIOD, NOISE = 40.0, 2.5, 0.5


@pytest.mark.parametrize("rate", [94.0, 100.0, 125.0, 500.0, 1000.0])
def test_a_log_of_any_rate_with_coarse_stamps_gives_the_plant_within_its_sigma(plant, nominal, rate, tmp_path):
    run = logged_run(plant, START, SECONDS, rate, noise=NOISE, seed=1, period=PERIOD, amplitude=0.1)
    steps = np.diff(run.time_ns) / 1e6
    assert np.all(steps == np.round(steps)) and steps.max() > 30.0          # whole ms, some gaps
    bag = write_joint_states(tmp_path / "log", run.time_ns * 1e-9, run.joint_names, run.position, run.velocity,
                             run.effort)
    recording = read_joint_states(bag)
    result = identify(nominal, recording, progress=lambda line: None)
    processing, account = result.processing, result.accounts["run"]
    assert processing["rate_hz"] == pytest.approx(rate, rel=0.1)
    assert processing["bandwidth_hz"] == pytest.approx(1.0 / PERIOD * 5, rel=0.1)   # the fifth harmonic
    assert result.cutoff_hz <= MAX_CUTOFF_PER_RATE * processing["rate_hz"] * (1 + 1e-9)
    assert processing["max_gap_s"] >= GAP_INTERVALS / processing["rate_hz"]
    # split only where an interval exceeds the longest gap bridged; nothing lost
    assert account.gaps == np.count_nonzero(np.diff(recording.t) > processing["max_gap_s"])
    assert account.used == account.recorded and account.regressed == account.grid - account.edge
    truth = result.base.from_standard(standard_parameters(plant))
    z = (result.least_squares.parameters - truth) / result.least_squares.std
    assert np.abs(z).max() < 4.0, dict(zip(result.base.expressions(), z.round(1)))
