package barrier

import (
	"reflect"
	"strings"
	"testing"
)

func TestCommandsOf(t *testing.T) {
	for _, c := range []struct {
		script string
		want   [][]string
	}{
		{"git push", [][]string{{"git", "push"}}},
		{"  ls -la\t&&  git   push ", [][]string{{"ls", "-la"}, {"git", "push"}}},
		{"a; b || c | d & e\nf", [][]string{{"a"}, {"b"}, {"c"}, {"d"}, {"e"}, {"f"}}},
		{"a |& b ;; c", [][]string{{"a"}, {"b"}, {"c"}}},
		{`git commit -m "a && b" && git push`, [][]string{{"git", "commit", "-m", "a && b"}, {"git", "push"}}},
		{`echo 'x; y' "q\"z" a\ b`, [][]string{{"echo", "x; y", `q"z`, "a b"}}},
		{"FOO=1 BAR=2 /usr/bin/git push", [][]string{{"git", "push"}}},
		{"sudo -u deploy -E git push", [][]string{{"git", "push"}}},
		{"sudo FOO=1 git push", [][]string{{"git", "push"}}},
		{"env -i PATH=/bin git push", [][]string{{"git", "push"}}},
		{"env -S 'git push' ", [][]string{{"git", "push"}}},
		{"timeout -s KILL 30s git push", [][]string{{"git", "push"}}},
		{"nohup nice -n 10 git push &", [][]string{{"git", "push"}}},
		{"xargs -I{} git push", [][]string{{"git", "push"}}},
		{"command -v git", nil},
		{"command git push", [][]string{{"git", "push"}}},
		{"exec git push", [][]string{{"git", "push"}}},
		{"time git push", [][]string{{"git", "push"}}},
		{`bash -lc "cd x && git push"`, [][]string{{"cd", "x"}, {"git", "push"}}},
		{`sh -o pipefail -c 'git push'`, [][]string{{"git", "push"}}},
		{`bash deploy.sh`, [][]string{{"bash", "deploy.sh"}}},
		{`eval "git push"`, [][]string{{"git", "push"}}},
		{"(cd repo && git push)", [][]string{{"cd", "repo"}, {"git", "push"}}},
		{"{ git push; }", [][]string{{"git", "push"}}},
		{"if git push; then echo ok; fi", [][]string{{"git", "push"}, {"echo", "ok"}, {"fi"}}},
		{"! git push", [][]string{{"git", "push"}}},
		{"git push > out.log 2>&1 < /dev/null", [][]string{{"git", "push"}}},
		{"git push 2> err.log >>out &>all", [][]string{{"git", "push"}}},
		{"cat <<EOF\ngit push\nEOF\nls", [][]string{{"cat"}, {"ls"}}},
		{"cat <<-'END' > f\n\tgit push\n\tEND\nls", [][]string{{"cat"}, {"ls"}}},
		{"grep x <<< 'git push'", [][]string{{"grep", "x"}}},
		{"echo $(git push) `npm publish`", [][]string{{"echo", "$(git push)", "`npm publish`"}, {"git", "push"}, {"npm", "publish"}}},
		{`echo "$(curl -X POST u)"`, [][]string{{"echo", "$(curl -X POST u)"}, {"curl", "-X", "POST", "u"}}},
		{"diff <(git show a) <(git show b)", [][]string{{"diff", "<(git show a)", "<(git show b)"}, {"git", "show", "a"}, {"git", "show", "b"}}},
		{"echo $((1+2)) ${HOME}", [][]string{{"echo", "$((1+2))", "${HOME}"}}},
		{"ls # git push", [][]string{{"ls"}}},
		{"echo a#b", [][]string{{"echo", "a#b"}}},
		{"git \\\npush", [][]string{{"git", "push"}}},
		{"FOO=bar", nil},
		{"", nil},
		{"'unterminated", [][]string{{"unterminated"}}},
		{"echo $(unterminated", [][]string{{"echo", "$(unterminated"}, {"unterminated"}}},
	} {
		var got [][]string
		for _, cmd := range commandsOf(c.script, nil) {
			got = append(got, cmd.argv)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("commandsOf(%q)\n got %q\nwant %q", c.script, got, c.want)
		}
	}
}

func TestCommandsOfArgv(t *testing.T) {
	got := commandsOf("", []string{"bash", "-lc", "git push && ls"})
	if len(got) != 2 || strings.Join(got[0].argv, " ") != "git push" {
		t.Errorf("argv form: %v", got)
	}
}

func TestEffectKeyAssignment(t *testing.T) {
	got := commandsOf("REWIND_EFFECT_KEY=release-v2 git push && REWIND_EFFECT_KEY=x ls", nil)
	if got[0].effectKey != "release-v2" || got[1].effectKey != "x" {
		t.Errorf("effect keys: %+v", got)
	}
}

func TestDeepNestingIsBounded(t *testing.T) {
	script := strings.Repeat("$(", 200) + "git push" + strings.Repeat(")", 200)
	_ = commandsOf(script, nil) // must terminate quickly and not overflow the stack
	many := strings.Repeat("a;", 10000)
	if n := len(commandsOf(many, nil)); n > maxSimpleCommands {
		t.Errorf("%d commands, more than the bound %d", n, maxSimpleCommands)
	}
}

// FuzzCommandsOf checks that no shell input panics the lexer, and that it stays bounded.
func FuzzCommandsOf(f *testing.F) {
	for _, s := range []string{"git push", "a && b || c", `echo "$(git push)"`, "cat <<EOF\nx\nEOF", "sudo -u x env -S 'bash -c \"npm publish\"'", "a\\", "<(x", "`"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cmds := commandsOf(s, nil)
		if len(cmds) > maxSimpleCommands*2 {
			t.Fatalf("%d commands from %d bytes", len(cmds), len(s))
		}
		rs := DefaultRules()
		for _, c := range cmds {
			rs.shellRule(c)
		}
	})
}
