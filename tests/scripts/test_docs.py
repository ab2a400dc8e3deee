"""docs/library.md shows examples/plan_d2xyz.cpp verbatim: the program in the docs is the one the
build compiles and the GPU tests run, so the docs cannot drift from code that works."""
import os
import re
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def block_after(marker, text):
    """The fenced code block that follows `marker` in `text`, or None."""
    at = text.find(marker)
    if at < 0:
        return None
    m = re.compile(r"```[a-z+]*\n(.*?)```", re.S).search(text, at)
    return m.group(1) if m else None


class DocsExampleTest(unittest.TestCase):
    def test_the_library_example_is_the_built_one(self):
        with open(os.path.join(ROOT, "docs", "library.md")) as f:
            doc = f.read()
        with open(os.path.join(ROOT, "examples", "plan_d2xyz.cpp")) as f:
            source = f.read()
        shown = block_after("<!-- example: examples/plan_d2xyz.cpp -->", doc)
        self.assertIsNotNone(shown, "docs/library.md has no block after its example marker")
        self.assertEqual(shown, source, "docs/library.md's example differs from examples/plan_d2xyz.cpp")

    def test_the_checker_sees_a_difference(self):
        text = "<!-- example: x -->\n```cpp\nint main() {}\n```\n"
        self.assertEqual(block_after("<!-- example: x -->", text), "int main() {}\n")
        self.assertIsNone(block_after("<!-- example: y -->", text))


if __name__ == "__main__":
    unittest.main()
