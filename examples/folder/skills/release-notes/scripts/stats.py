"""Lines, words and characters of the text given as the first argument, as JSON."""
import json
import sys

text = sys.argv[1] if len(sys.argv) > 1 else sys.stdin.read()
print(json.dumps({"lines": len(text.splitlines()), "words": len(text.split()), "characters": len(text)}))
