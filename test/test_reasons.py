"""robodyn_ros.plumbing.reasons.bounded: whatever a rejected input held, its reason stays short."""
import array

import numpy as np

from robodyn_ros.plumbing.reasons import MAX_CHARS, bounded


def test_short_text_and_short_lists_are_shown_whole():
    assert bounded("leg lengths not finite") == "leg lengths not finite"
    assert bounded(["leg1", "leg2"]) == "['leg1', 'leg2']"
    assert bounded([]) == "[]"


def test_a_long_list_is_its_count_and_first_items():
    names = [f"joint{i}" for i in range(100_000)]
    text = bounded(names)
    assert text == ("['joint0', 'joint1', 'joint2', 'joint3', 'joint4', "
                    "... 99995 more, 100000 in all]")
    assert bounded(names, max_items=2) == "['joint0', 'joint1', ... 99998 more, 100000 in all]"
    assert bounded(x for x in range(7)) == "[0, 1, 2, 3, 4, ... 2 more, 7 in all]"


def test_arrays_show_plain_numbers():
    assert bounded(np.arange(7.0)) == "[0.0, 1.0, 2.0, 3.0, 4.0, ... 2 more, 7 in all]"
    assert bounded(array.array("d", [1.5, 2.0])) == "[1.5, 2.0]"   # a message's float field


def test_long_text_is_cut_saying_how_long_it_was():
    text = bounded("x" * 1_000_000)
    assert len(text) == MAX_CHARS and text.endswith("... (1000000 characters)")
    assert text.startswith("x" * 900)
    assert len(bounded("y" * 50, max_chars=20)) == 20
    # few items, each huge: the result is bounded too
    assert len(bounded(["z" * 10_000] * 3)) <= MAX_CHARS
