"""The friction a real arm has (issue 38, item 3): per joint viscous + Coulomb (symmetric or
asymmetric, sign or tanh law) + a constant offset, identified with the inertial parameters; the URDF
keeps what it can carry, the friction file beside it the rest, and the two read back give the
identified torques.

The truth's friction is written here in closed form, not through ``FrictionForm.columns``: the test
checks the regressor's columns against the law, not against themselves.
"""

import numpy as np
import pytest

from robodyn_ros.dynamics import ModelError, RobotModel
from robodyn_ros.dynamics.base_parameters import sample_states
from robodyn_ros.dynamics.friction import FrictionForm, FrictionModel, friction_file
from robodyn_ros.dynamics.inertial_parameters import parameter_names, standard_parameters
from robodyn_ros.identification.estimate import ordinary_least_squares
from robodyn_ros.identification.identify import identify
from robodyn_ros.identification.layout import Layout
from robodyn_ros.identification.synthetic import synthetic_run
from robodyn_ros.identification.urdf_write import write_identified_urdf

from conftest import URDF

START = np.radians([90, 0, 90, 0, 0, 0])
VISCOUS = np.array([0.4, 0.6, 0.3, 0.05, 0.04, 0.03])
COULOMB = np.array([0.8, 1.1, 0.6, 0.2, 0.15, 0.1])
ASYMMETRY = np.array([0.2, -0.3, 0.1, 0.05, -0.02, 0.03])
OFFSET = np.array([0.05, -0.4, 0.2, 0.03, -0.02, 0.01])


def law(spec, qd):
    """τ_f of every joint at ``qd`` (N, 6) and the true parameters per joint, in closed form."""
    scale = float(spec.split("tanh=")[1].split("+")[0]) if "tanh=" in spec else None
    s = np.tanh(qd / scale) if scale else np.sign(qd)
    if spec.startswith("asymmetric"):
        positive, negative = COULOMB + ASYMMETRY, COULOMB - ASYMMETRY
        tau = VISCOUS * qd + np.where(s > 0, positive * s, negative * s)
        values = [VISCOUS, positive, negative]
    else:
        tau = VISCOUS * qd + COULOMB * s
        values = [VISCOUS, COULOMB]
    if "offset" in spec:
        tau = tau + OFFSET
        values.append(OFFSET)
    return tau, np.column_stack(values)


FORMS = ["asymmetric", "coulomb", "coulomb+offset", "coulomb+tanh=0.05", "asymmetric+tanh=0.05",
         "coulomb+tanh=0.05+offset"]


def test_the_default_form_is_the_regressors_standard_layout(nominal):
    layout = Layout.of(nominal)
    assert layout.standard and list(layout.names) == parameter_names(nominal)
    np.testing.assert_array_equal(layout.nominal(), standard_parameters(nominal))


@pytest.mark.parametrize("spec", FORMS)
def test_each_friction_form_is_recovered_with_the_inertial_parameters(plant, nominal, spec):
    q, qd, qdd = sample_states(nominal, 400, np.random.default_rng(4))
    friction, truth = law(spec, qd)
    tau = plant.inverse_dynamics(q, qd, qdd, friction=False) + friction
    layout = Layout.of(nominal, spec)
    estimate = ordinary_least_squares(layout.base.base_regressor(layout.regressor(q, qd, qdd)), tau)
    values = dict(zip(layout.base.expressions(), estimate.parameters))
    found = np.array([[values[f"{joint}.{name}"] for name in layout.forms[j].names()]
                      for j, joint in enumerate(nominal.joint_names)])
    np.testing.assert_allclose(found, truth, rtol=1e-6, atol=1e-9)
    # the rigid bodies and armatures come back too
    rigid = layout.base.from_standard(Layout.of(plant, spec).nominal())
    bodies = [k for k, name in enumerate(layout.base.expressions()) if "viscous" not in name
              and "coulomb" not in name and "offset" not in name]
    np.testing.assert_allclose(estimate.parameters[bodies], rigid[bodies], rtol=1e-6, atol=1e-9)


def test_forms_differ_per_joint(plant, nominal):
    forms = {"joint_1": "coulomb+offset", "joint_2": "coulomb+tanh=0.05+offset"}
    layout = Layout.of(nominal, forms)
    assert [form.spec() for form in layout.forms[:3]] == [
        "viscous+coulomb+offset", "viscous+coulomb+tanh=0.05+offset", "viscous+asymmetric"]
    assert "joint_2.offset" in layout.names and "joint_3.offset" not in layout.names
    with pytest.raises(ValueError, match="joint_9"):
        Layout.of(nominal, {"joint_9": "coulomb"})


def test_identify_with_a_smooth_law_and_an_offset_writes_a_urdf_and_a_friction_file_that_agree(
        plant, nominal, tmp_path):
    """End to end, through the filter: the tanh law's columns are smooth, so the filtered run
    gives them back closely; the consistent estimate, written as the URDF (bodies, armature) plus
    the friction file and read back, predicts what the estimate's own regressor predicts."""
    spec = "coulomb+tanh=0.05+offset"
    run = synthetic_run(plant, START, 12.0)
    tau_f, truth = law(spec, run.velocity)
    # the plant's own friction is viscous only: exchanged for the law's
    recording = type(run)(**{**run.__dict__, "effort": run.effort - plant.friction_torques(run.velocity)
                             + tau_f})
    result = identify(nominal, recording, friction=spec, progress=lambda line: None)
    values = dict(zip(result.base.expressions(), result.least_squares.parameters))
    found = np.array([[values[f"{joint}.{name}"] for name in ("viscous", "coulomb", "offset")]
                      for joint in nominal.joint_names])
    np.testing.assert_allclose(found, truth, rtol=0, atol=2e-3 * np.abs(truth).max())
    assert result.fits[("held-out", "consistent")].stacked < 1e-2
    urdf = tmp_path / "identified.urdf"
    write_identified_urdf(URDF, nominal, result.standard_parameters, urdf)
    result.friction.save(friction_file(urdf))
    model = RobotModel.from_urdf(urdf)
    loaded = FrictionModel.load(tmp_path / "identified.friction.yaml", model.joint_names)
    q, qd, qdd = (recording.position, recording.velocity, np.gradient(recording.velocity, recording.t, axis=0))
    read_back = model.inverse_dynamics(q, qd, qdd, friction=False) + loaded.torques(qd)
    direct = result.layout.regressor(q, qd, qdd) @ result.parameters
    np.testing.assert_allclose(read_back, direct, rtol=0, atol=1e-9 * np.abs(direct).max())
    # the URDF alone keeps viscous + the mean Coulomb magnitude, sign law: no offset
    link = model.links[1]
    assert link.viscous == pytest.approx(loaded.values[1][0], rel=1e-6)
    assert link.coulomb_positive == pytest.approx(loaded.values[1][1], rel=1e-6)


def test_the_friction_file_is_refused_naming_what_is_wrong(tmp_path):
    path = tmp_path / "f.friction.yaml"
    model = FrictionModel(("a", "b"), (FrictionForm(), FrictionForm.parse("coulomb+tanh=0.1+offset")),
                          (np.array([1.0, 2.0, 3.0]), np.array([0.5, 0.2, -0.1])))
    model.save(path)
    again = FrictionModel.load(path, ["b", "a"])
    assert again.forms[0].velocity_scale == 0.1 and again.values[1].tolist() == [1.0, 2.0, 3.0]
    qd = np.array([[0.3, -0.02]])
    expected = [0.5 * 0.3 + 0.2 * np.tanh(3.0) - 0.1, 1.0 * -0.02 - 3.0]   # b: tanh; a: c⁻ at q̇ < 0
    np.testing.assert_allclose(again.torques(qd), [expected], rtol=1e-12)
    with pytest.raises(ModelError, match="joint 'c'"):
        FrictionModel.load(path, ["a", "c"])
    path.write_text(path.read_text().replace("offset: -0.1", "offset: .nan"))
    with pytest.raises(ModelError, match="'b'.*not finite"):
        FrictionModel.load(path)
    with pytest.raises(ModelError, match="coulomb\\+offset"):
        FrictionForm.parse("asymmetric+offset")
    with pytest.raises(ModelError, match="unknown term 'stiction'"):
        FrictionForm.parse("coulomb+stiction")
    with pytest.raises(ModelError, match="tanh=0.02"):
        FrictionForm.parse("tanh")


def test_identify_command_takes_forms_per_joint_and_writes_the_friction_file(plant, nominal, tmp_path, capsys):
    from robodyn_ros.apps.identify import main as identify_main
    from robodyn_ros.identification.bag import write_joint_states

    run = synthetic_run(plant, START, 8.0)
    bag = write_joint_states(tmp_path / "run", run.t, run.joint_names, run.position, run.velocity, run.effort)
    out = tmp_path / "identified.urdf"
    assert identify_main([str(bag), "--urdf", URDF, "-o", str(out), "--friction", "coulomb+tanh=0.05+offset",
                          "--friction", "joint_6=coulomb"]) == 0
    printed = capsys.readouterr().out
    assert "samples: 8000 in, 8000 used" in printed and "stacked" in printed
    loaded = FrictionModel.load(friction_file(out), nominal.joint_names)
    assert [form.spec() for form in loaded.forms] == ["viscous+coulomb+tanh=0.05+offset"] * 5 + ["viscous+coulomb"]
    assert identify_main([str(bag), "--urdf", URDF, "-o", str(out), "--friction", "asymmetric+offset"]) == 2
    assert "coulomb+offset" in capsys.readouterr().err


@pytest.mark.parametrize("spec", FORMS)
def test_a_friction_file_is_the_models_friction_everywhere_the_model_is_used(nominal, spec):
    """issue 46: the file identify writes is read by the controller and its observer as the model's
    friction (``RobotModel.with_friction``). Against the closed form ``law`` above: Newton–Euler
    (one state and a batch), the model's friction torques, forward dynamics (its bias pass), the
    drive stage's friction, the observer's β and the computed-torque law; exactly at rest the
    Coulomb term is 0 and the offset stays."""
    from robodyn_ros.control.drive import DRIVE_ADDS, DRIVE_FRICTION
    from robodyn_ros.control.laws import ComputedTorque
    from robodyn_ros.control.momentum_observer import momentum_terms

    rng = np.random.default_rng(7)
    q, qd, qdd = (rng.uniform(-1.0, 1.0, (40, 6)) * s for s in (1.5, 0.2, 3.0))
    qd[0] = 0.0
    truth, values = law(spec, qd)
    form = FrictionForm.parse(spec)
    model = nominal.with_friction(FrictionModel(tuple(nominal.joint_names), (form,) * 6, tuple(values)))
    rigid = nominal.inverse_dynamics(q, qd, qdd, friction=False)
    np.testing.assert_allclose(model.inverse_dynamics(q, qd, qdd), rigid + truth, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(model.inverse_dynamics(q[3], qd[3], qdd[3]), rigid[3] + truth[3], rtol=1e-12)
    np.testing.assert_allclose(model.friction_torques(qd), truth, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(truth[0], OFFSET if "offset" in spec else 0.0, atol=0)
    np.testing.assert_allclose(model.forward_dynamics(q[5], qd[5], rigid[5] + truth[5]), qdd[5], rtol=1e-9)
    adds = np.empty(6)
    for k in (0, 9):
        DRIVE_ADDS.call(model.params, DRIVE_FRICTION, q[k], qd[k], adds)
        np.testing.assert_allclose(adds, truth[k], rtol=1e-12, atol=1e-15)
        beta_without = momentum_terms(nominal, q[k], qd[k], friction=False)[1]
        np.testing.assert_allclose(beta_without - momentum_terms(model, q[k], qd[k])[1], truth[k],
                                   rtol=1e-9, atol=1e-12)
    ct = ComputedTorque(model, {"kp": 100.0, "kd": 20.0})
    np.testing.assert_allclose(ct.compute(q[9], qd[9], q[9], np.zeros(6), np.zeros(6), 1e-3),
                               nominal.inverse_dynamics(q[9], qd[9], -20.0 * qd[9], friction=False)
                               + truth[9], rtol=1e-9)


def test_with_friction_names_what_it_cannot_take(nominal):
    from robodyn_ros.control.adaptive import AdaptiveComputedTorque

    forms = (FrictionForm.parse("coulomb+tanh=0.05+offset"),) * 5
    short = FrictionModel(tuple(nominal.joint_names[:5]), forms, tuple(np.array([0.1, 0.2, 0.3]) for _ in forms))
    with pytest.raises(ModelError, match="no friction for joint.*joint_6"):
        nominal.with_friction(short)
    negative = FrictionModel(tuple(nominal.joint_names), (FrictionForm("symmetric"),) * 6,
                             tuple(np.array([0.1, -0.2]) for _ in range(6)))
    with pytest.raises(ModelError, match="coulomb_positive .* non-negative"):
        nominal.with_friction(negative)
    smooth = nominal.with_friction(FrictionModel(tuple(nominal.joint_names), forms + forms[:1],
                                                 tuple(np.array([0.1, 0.2, 0.3]) for _ in range(6))))
    # adapting the friction as sign-law columns would fight the file's law: refused, naming both
    defaults = dict(AdaptiveComputedTorque.defaults)
    with pytest.raises(ValueError, match="adapt: all .*smooth Coulomb law or an offset"):
        AdaptiveComputedTorque(smooth, {**defaults, "adapt": "all"})
    AdaptiveComputedTorque(smooth, {**defaults, "adapt": "payload"})
