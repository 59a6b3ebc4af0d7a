"""take5.text.inert: the one definition of "made inert for a terminal or a page"."""

from take5.text import inert


def test_control_and_format_characters_become_visible_escapes():
    hostile = "a\x1b[2J\x1b]0;pwned\x07b\u202ec\u200bd\x7fe\x85f\u2028g"
    shown = inert(hostile)
    assert shown == "a\\x1b[2J\\x1b]0;pwned\\x07b\\u202ec\\u200bd\\x7fe\\x85f\\u2028g"
    assert shown.isprintable()


def test_lines_are_kept_or_escaped_as_asked():
    assert inert("one\ntwo\tthree") == "one\ntwo\tthree"
    assert inert("one\ntwo\rthree", keep_lines=False) == "one\\x0atwo\\x0dthree"


def test_printable_text_is_unchanged():
    for text in (
        "plain",
        "naïve café – 6 nimmt! ♉",
        "[bold]markup[/] is text here",
        "  spaces  ",
        "",
    ):
        assert inert(text) == text
