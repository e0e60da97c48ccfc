package barrier

import "strings"

// BuiltinRule is one of the built-in effect rules. Shell rules look at each normalised simple
// command (program name without its path, after env assignments and wrappers such as sudo, env,
// timeout, nohup, xargs, and inside sh -c scripts); the MCP rule looks at tool names. A rules
// file can disable any of them by Name, or replace one by defining a rule with the same Name.
type BuiltinRule struct {
	Name       string   // stable name, used in rules files ("disable") and ledger records
	Programs   []string // the program names it looks at (shell rules); none for the MCP rule
	Summary    string   // what it matches, for the documentation table
	Matches    []string // examples that match (tested; shown in RULES.md)
	NearMisses []string // examples that look alike and do not match (tested; shown in RULES.md)

	shell func(argv []string) bool // for shell rules: argv[0] is the program
	tool  func(name string) bool   // for the MCP rule
}

// Builtins returns the built-in rules, in the order they are tried.
func Builtins() []BuiltinRule { return append([]BuiltinRule(nil), builtinRules...) }

var (
	gitValue     = flags("-C -c --git-dir --work-tree --namespace --super-prefix --config-env")
	npmValue     = flags("--prefix -w --workspace --registry --userconfig --cache --loglevel --otp --tag --access")
	pnpmValue    = flags("--filter -F -C --dir --workspace-dir --reporter --loglevel")
	yarnValue    = flags("--cwd")
	cargoValue   = flags("-Z --config -C --color --manifest-path")
	dockerValue  = flags("-H --host -c --context --config -l --log-level --tlscacert --tlscert --tlskey")
	composeValue = flags("-f --file -p --project-name --profile --env-file --project-directory --ansi --progress")
	ghValue      = flags("-R --repo --hostname")
	kubeValue    = flags("-n --namespace --context --kubeconfig -s --server --cluster --user --token --as --as-group --request-timeout -v --cache-dir")
	helmValue    = flags("-n --namespace --kube-context --kubeconfig --registry-config --repository-config --repository-cache --kube-apiserver --kube-token")
	awsValue     = flags("--profile --region --output --endpoint-url --query --color --ca-bundle --cli-read-timeout --cli-connect-timeout --cli-binary-format")
	gcloudValue  = flags("--project --account --configuration --format --verbosity --impersonate-service-account --billing-project --region --zone --flags-file")
	azValue      = flags("--subscription -g --resource-group -n --name --output -o --query -l --location")
	mailValue    = flags("-s -c -b -r -a -A -S -q -u -e")
	stripeValue  = flags("--api-key --project-name -p --color --log-level --stripe-account --stripe-version -d --data -c --config -e --expand --idempotency")
	sshValue     = flags("-b -c -D -E -e -F -I -i -J -L -l -m -o -p -R -S -W -w -B -P")
	scpValue     = flags("-c -F -i -J -l -o -P -S -D -X")
	sftpValue    = flags("-B -b -c -D -F -i -J -l -o -P -R -S -s -X")
	rsyncValue   = flags("-e --rsh --exclude --include --filter -f --rsync-path --port --password-file --exclude-from --include-from --files-from --log-file --chmod --chown --bwlimit --timeout -T --temp-dir --partial-dir --backup-dir --suffix --compare-dest --copy-dest --link-dest -B --block-size --max-size --min-size -M --remote-option --out-format --info --debug")
)

var builtinRules = []BuiltinRule{
	{
		Name: "git-push", Programs: []string{"git"},
		Summary:    "`git push` (also after global options such as `-C dir`); not `--dry-run`/`-n`",
		Matches:    []string{"git push", "git push origin main", "cd repo && git -C sub push --tags", "FOO=1 /usr/bin/git push", "sudo -u ci git push -f"},
		NearMisses: []string{"git status", "git stash push", "git push --dry-run", "git log --grep push", "echo git push"},
		shell: func(a []string) bool {
			sub, rest := subcommand(a[1:], gitValue)
			return sub == "push" && !hasFlag(rest, "--dry-run", "-n")
		},
	},
	{
		Name: "package-publish", Programs: []string{"npm", "pnpm", "yarn", "bun"},
		Summary:    "`npm publish\\|unpublish\\|deprecate`, `pnpm publish`, `yarn publish`, `yarn npm publish`, `bun publish`; not `--dry-run`",
		Matches:    []string{"npm publish", "npm publish --access public", "pnpm -r publish", "yarn npm publish", "bun publish", "npm unpublish pkg@1.0.0"},
		NearMisses: []string{"npm install", "npm run publish", "npm publish --dry-run", "yarn add publish", "pnpm pack"},
		shell: func(a []string) bool {
			var sub string
			var rest []string
			switch a[0] {
			case "npm":
				sub, rest = subcommand(a[1:], npmValue)
				if sub == "unpublish" || sub == "deprecate" {
					return true
				}
			case "pnpm":
				sub, rest = subcommand(a[1:], pnpmValue)
			case "yarn":
				sub, rest = subcommand(a[1:], yarnValue)
				if sub == "npm" {
					sub, rest = subcommand(rest, nil)
				}
			default:
				sub, rest = subcommand(a[1:], nil)
			}
			return sub == "publish" && !dryRun(rest)
		},
	},
	{
		Name: "cargo-publish", Programs: []string{"cargo"},
		Summary:    "`cargo publish`, `cargo yank`; not `--dry-run`/`-n`",
		Matches:    []string{"cargo publish", "cargo +stable publish -p mycrate", "cargo yank --version 1.0.1"},
		NearMisses: []string{"cargo build", "cargo publish --dry-run", "cargo package"},
		shell: func(a []string) bool {
			args := a[1:]
			if len(args) > 0 && strings.HasPrefix(args[0], "+") {
				args = args[1:]
			}
			sub, rest := subcommand(args, cargoValue)
			return (sub == "publish" && !hasFlag(rest, "--dry-run", "-n")) || sub == "yank"
		},
	},
	{
		Name: "image-push", Programs: []string{"docker", "podman"},
		Summary:    "`docker\\|podman push`, `image push`, `manifest push`, `compose push`, `build`/`buildx build\\|bake` with `--push`",
		Matches:    []string{"docker push registry.example.com/app:1.2", "podman image push app", "docker buildx build --push -t app .", "docker compose -f prod.yml push"},
		NearMisses: []string{"docker pull app", "docker build -t app .", "docker images", "docker compose up"},
		shell: func(a []string) bool {
			sub, rest := subcommand(a[1:], dockerValue)
			switch sub {
			case "push":
				return true
			case "image", "manifest":
				next, _ := subcommand(rest, nil)
				return next == "push"
			case "compose":
				next, _ := subcommand(rest, composeValue)
				return next == "push"
			case "build":
				return hasFlag(rest, "--push")
			case "buildx":
				next, r := subcommand(rest, nil)
				if next != "build" && next != "bake" {
					return false
				}
				if hasFlag(r, "--push") {
					return true
				}
				for _, w := range r {
					if strings.Contains(w, "type=registry") || strings.Contains(w, "push=true") {
						return true
					}
				}
			}
			return false
		},
	},
	{
		Name: "github-cli", Programs: []string{"gh"},
		Summary:    "`gh release create\\|upload\\|delete\\|edit`, `gh pr create\\|merge\\|close\\|comment\\|review\\|edit\\|ready\\|reopen`, `gh issue create\\|close\\|comment\\|edit\\|delete\\|reopen\\|transfer`, `gh repo create\\|delete\\|fork\\|archive\\|rename\\|edit`, `gh workflow run`, `gh run rerun\\|cancel`, `gh secret\\|variable set\\|delete`, `gh api` with a non-GET method or fields (GraphQL only with a mutation)",
		Matches:    []string{"gh release create v1.2.0", "gh pr create --fill", "gh pr merge 12 --squash", "gh api -X POST repos/o/r/issues -f title=x", "gh api graphql -f query='mutation { x }'"},
		NearMisses: []string{"gh pr list", "gh pr view 12", "gh release view v1.2.0", "gh api repos/o/r", "gh api graphql -f query='query { viewer { login } }'"},
		shell: func(a []string) bool {
			pos := positionals(a[1:], ghValue)
			if len(pos) == 0 {
				return false
			}
			if pos[0] == "api" {
				return ghAPIMutates(a[1:], pos)
			}
			if len(pos) < 2 {
				return false
			}
			verbs, ok := ghMutations[pos[0]]
			return ok && strings.Contains(" "+verbs+" ", " "+pos[1]+" ")
		},
	},
	{
		Name: "kubectl-mutate", Programs: []string{"kubectl"},
		Summary:    "`kubectl apply\\|create\\|delete\\|patch\\|replace\\|scale\\|edit\\|set\\|label\\|annotate\\|drain\\|cordon\\|uncordon\\|taint\\|autoscale\\|expose\\|run`, `kubectl rollout restart\\|undo\\|pause\\|resume`; not `--dry-run`",
		Matches:    []string{"kubectl apply -f deploy.yaml", "kubectl -n prod delete pod web-1", "kubectl rollout restart deploy/web", "kubectl --context prod create secret generic s"},
		NearMisses: []string{"kubectl get pods", "kubectl apply --dry-run=client -f x.yaml", "kubectl rollout status deploy/web", "kubectl -n delete get pods"},
		shell: func(a []string) bool {
			sub, rest := subcommand(a[1:], kubeValue)
			if dryRun(rest) {
				return false
			}
			switch sub {
			case "apply", "create", "delete", "patch", "replace", "scale", "edit", "set", "label", "annotate",
				"drain", "cordon", "uncordon", "taint", "autoscale", "expose", "run":
				return true
			case "rollout":
				next, _ := subcommand(rest, kubeValue)
				return next == "restart" || next == "undo" || next == "pause" || next == "resume"
			}
			return false
		},
	},
	{
		Name: "helm-mutate", Programs: []string{"helm"},
		Summary:    "`helm install\\|upgrade\\|uninstall\\|delete\\|rollback\\|push`; not `--dry-run`",
		Matches:    []string{"helm install web ./chart", "helm upgrade --install web ./chart -n prod", "helm -n prod rollback web 3"},
		NearMisses: []string{"helm template web ./chart", "helm list", "helm upgrade web ./chart --dry-run"},
		shell: func(a []string) bool {
			sub, rest := subcommand(a[1:], helmValue)
			switch sub {
			case "install", "upgrade", "uninstall", "delete", "rollback", "push":
				return !dryRun(rest)
			}
			return false
		},
	},
	{
		Name: "terraform-apply", Programs: []string{"terraform", "tofu", "terragrunt"},
		Summary:    "`terraform\\|tofu apply\\|destroy`, `terragrunt apply\\|destroy\\|run-all apply\\|run-all destroy`",
		Matches:    []string{"terraform apply -auto-approve", "tofu destroy", "terraform -chdir=infra apply", "terragrunt run-all apply"},
		NearMisses: []string{"terraform plan", "terraform plan -destroy", "tofu init", "terraform validate"},
		shell: func(a []string) bool {
			sub, rest := subcommand(a[1:], nil)
			if a[0] == "terragrunt" && (sub == "run-all" || sub == "run") {
				sub, _ = subcommand(rest, nil)
			}
			return sub == "apply" || sub == "destroy"
		},
	},
	{
		Name: "aws-mutate", Programs: []string{"aws"},
		Summary:    "`aws <service> <operation>` whose operation creates, changes, sends or deletes (create-, delete-, put-, update-, run-, send-, publish, invoke, ...); `aws s3 rm\\|mb\\|rb\\|website`, `aws s3 cp\\|mv\\|sync` to `s3://`",
		Matches:    []string{"aws s3 cp build.zip s3://bucket/app.zip", "aws --profile prod ec2 run-instances --image-id ami-1", "aws sns publish --topic-arn arn:x --message hi", "aws lambda invoke --function-name f out.json", "aws s3 rm s3://bucket/key"},
		NearMisses: []string{"aws s3 ls s3://bucket", "aws s3 cp s3://bucket/key ./local", "aws ec2 describe-instances", "aws sts get-caller-identity", "aws configure set region eu-west-1"},
		shell: func(a []string) bool {
			pos := positionals(a[1:], awsValue)
			if len(pos) < 2 || pos[0] == "configure" || pos[0] == "help" {
				return false
			}
			if pos[0] == "s3" {
				switch pos[1] {
				case "rm", "mb", "rb", "website":
					return true
				case "cp", "mv", "sync":
					return len(pos) >= 4 && strings.HasPrefix(pos[3], "s3://")
				}
				return false
			}
			return awsMutatingOp(pos[1])
		},
	},
	{
		Name: "gcloud-mutate", Programs: []string{"gcloud"},
		Summary:    "`gcloud ... <verb>` with a verb that creates, changes or deletes (create, delete, deploy, update, set, add-*, remove-*, publish, submit, ssh, ...); not `gcloud config\\|auth\\|info`",
		Matches:    []string{"gcloud run deploy web --image gcr.io/p/web", "gcloud compute instances create vm-1", "gcloud pubsub topics publish t --message hi", "gcloud beta functions deploy f"},
		NearMisses: []string{"gcloud compute instances list", "gcloud config set project p", "gcloud auth login", "gcloud run services describe web"},
		shell: func(a []string) bool {
			pos := positionals(a[1:], gcloudValue)
			if len(pos) > 0 && (pos[0] == "alpha" || pos[0] == "beta" || pos[0] == "preview") {
				pos = pos[1:]
			}
			if len(pos) < 2 {
				return false
			}
			switch pos[0] {
			case "config", "auth", "info", "help", "version", "init", "components", "topic", "cheat-sheet", "feedback", "survey":
				return false
			}
			for _, v := range pos[1:min(len(pos), 5)] {
				if cloudVerb(v, gcloudVerbs) {
					return true
				}
			}
			return false
		},
	},
	{
		Name: "az-mutate", Programs: []string{"az"},
		Summary:    "`az ... <verb>` with a verb that creates, changes or deletes (create, delete, update, set, deploy, start, stop, invoke, upload, ...); not `az login\\|account\\|config`",
		Matches:    []string{"az group create -n rg -l westeurope", "az webapp deploy --src-path app.zip", "az vm run-command invoke -g rg -n vm --command-id RunShellScript", "az keyvault secret set --vault-name v -n s --value x"},
		NearMisses: []string{"az vm list", "az group show -n rg", "az account set -s sub", "az login"},
		shell: func(a []string) bool {
			pos := positionals(a[1:], azValue)
			if len(pos) < 2 {
				return false
			}
			switch pos[0] {
			case "login", "logout", "account", "config", "configure", "version", "help", "find", "upgrade",
				"extension", "interactive", "init", "cache", "bicep", "feedback", "survey":
				return false
			}
			for _, v := range pos[1:min(len(pos), 5)] {
				if cloudVerb(v, azVerbs) {
					return true
				}
			}
			return false
		},
	},
	{
		Name: "http-mutate", Programs: []string{"curl", "wget"},
		Summary:    "`curl` with `-X\\|--request POST\\|PUT\\|PATCH\\|DELETE` or a data flag (`-d`, `--data*`, `--json`, `-F`, `--form`, `-T`) without `-G`; `wget` with `--post-data\\|--post-file` or `--method` POST/PUT/PATCH/DELETE",
		Matches:    []string{"curl -X POST https://api.example.com/charges -d amount=100", "curl -sS --json '{\"a\":1}' https://api.example.com/x", "curl -XDELETE https://api.example.com/x/1", "wget --post-data 'a=1' https://api.example.com/x"},
		NearMisses: []string{"curl https://example.com", "curl -sSLo out.tgz https://example.com/x.tgz", "curl -X GET https://api.example.com/x", "curl -G -d q=1 https://api.example.com/search", "wget https://example.com/file"},
		shell: func(a []string) bool {
			if a[0] == "wget" {
				if hasFlag(a[1:], "--post-data", "--post-file") {
					return true
				}
				m, _ := flagValue(a[1:], "--method")
				return mutatingMethod(m)
			}
			return curlMutates(a[1:])
		},
	},
	{
		Name: "mail-send", Programs: []string{"sendmail", "mail", "mailx", "msmtp"},
		Summary:    "`sendmail`, `msmtp` (not the queue/verify modes `-bp\\|-bv\\|-bt`); `mail\\|mailx` with a recipient",
		Matches:    []string{"sendmail -t < message.eml", "mail -s 'Invoice' billing@example.com < invoice.txt", "msmtp -a work boss@example.com"},
		NearMisses: []string{"mail", "mail -f ~/mbox", "sendmail -bp", "mailq"},
		shell: func(a []string) bool {
			switch a[0] {
			case "sendmail", "msmtp":
				return !hasFlag(a[1:], "-bp", "-bv", "-bt", "-bi", "--version", "--help")
			}
			if hasFlag(a[1:], "-f", "-H", "-e") {
				return false // reading or checking a mailbox
			}
			return len(positionals(a[1:], mailValue)) > 0
		},
	},
	{
		Name: "stripe-cli", Programs: []string{"stripe"},
		Summary:    "`stripe post\\|delete\\|fixtures\\|trigger ...`, `stripe <resource> create\\|update\\|delete\\|cancel\\|capture\\|confirm\\|pay\\|refund\\|...`",
		Matches:    []string{"stripe customers create --email a@example.com", "stripe post /v1/refunds -d charge=ch_1", "stripe trigger payment_intent.succeeded", "stripe payment_intents confirm pi_1"},
		NearMisses: []string{"stripe listen --forward-to localhost:3000", "stripe customers list", "stripe get /v1/charges/ch_1", "stripe logs tail"},
		shell: func(a []string) bool {
			pos := positionals(a[1:], stripeValue)
			if len(pos) == 0 {
				return false
			}
			switch pos[0] {
			case "post", "delete", "fixtures", "trigger":
				return true
			case "listen", "logs", "login", "logout", "get", "version", "help", "completion", "config", "status", "open", "samples", "serve", "resources":
				return false
			}
			for _, v := range pos[1:min(len(pos), 3)] {
				if strings.Contains(" "+stripeVerbs+" ", " "+v+" ") {
					return true
				}
			}
			return false
		},
	},
	{
		Name: "ssh-remote", Programs: []string{"ssh"},
		Summary:    "`ssh` to a host (a remote session or command); not `-V\\|-G\\|-O`",
		Matches:    []string{"ssh deploy@prod.example.com 'systemctl restart app'", "ssh -i key.pem -p 2222 host uptime"},
		NearMisses: []string{"ssh -V", "ssh -G host", "ssh-keygen -t ed25519", "ssh-add key.pem"},
		shell: func(a []string) bool {
			if hasFlag(a[1:], "-V", "-G", "-O") {
				return false
			}
			return len(positionals(a[1:], sshValue)) > 0
		},
	},
	{
		Name: "copy-to-remote", Programs: []string{"scp", "rsync", "sftp"},
		Summary:    "`scp\\|rsync` whose destination is remote (`host:path`, `user@host:path`, `scp://`, `rsync://`), any `sftp` session",
		Matches:    []string{"scp build.tgz deploy@prod:/srv/app/", "rsync -avz --delete dist/ web:/var/www/", "sftp deploy@prod"},
		NearMisses: []string{"scp prod:/var/log/app.log .", "rsync -a src/ backup/", "scp a.txt ./b:c.txt"},
		shell: func(a []string) bool {
			var pos []string
			switch a[0] {
			case "sftp":
				return len(positionals(a[1:], sftpValue)) > 0
			case "scp":
				pos = positionals(a[1:], scpValue)
			default:
				pos = positionals(a[1:], rsyncValue)
			}
			return len(pos) >= 2 && remotePath(pos[len(pos)-1])
		},
	},
	{
		Name: "mcp-outbound",
		Summary: "MCP tools (`mcp__<server>__<tool>`, or Cursor's bare tool name) whose tool name starts (after an optional service prefix such as `slack_`) with an outbound verb " +
			"(send, post, publish, deploy, charge, refund, pay, payout, transfer, merge, push, notify, email, sms, tweet, invoice, dispatch, broadcast), " +
			"or with create\\|add\\|issue\\|submit\\|open\\|execute followed by an external noun (payment, charge, refund, payout, transfer, invoice, subscription, order, issue, pull, comment, release, message, email, post, tweet, deployment, repository, gist, review, webhook, ticket); never agent-rewind's own tools",
		Matches:    []string{"mcp__slack__slack_post_message", "mcp__stripe__create_refund", "mcp__github__merge_pull_request", "mcp__github__create_pull_request", "mcp__github__push_files"},
		NearMisses: []string{"mcp__github__get_pull_request", "mcp__filesystem__create_directory", "mcp__memory__create_entities", "mcp__blog__get_post", "mcp__slack__slack_list_channels", "mcp__agent-rewind__guard_effect"},
		tool:       mcpOutbound,
	},
}

var ghMutations = map[string]string{
	"release":  "create upload delete edit",
	"pr":       "create merge close comment review edit ready reopen",
	"issue":    "create close comment edit delete reopen transfer",
	"repo":     "create delete fork archive rename edit",
	"workflow": "run enable disable",
	"run":      "rerun cancel",
	"secret":   "set delete",
	"variable": "set delete",
	"label":    "create delete edit",
	"gist":     "create delete edit",
}

func ghAPIMutates(args, pos []string) bool {
	method, _ := flagValue(args, "-X", "--method")
	var fieldValues []string
	for i, a := range args {
		for _, f := range []string{"-f", "-F", "--field", "--raw-field"} {
			if a == f && i+1 < len(args) {
				fieldValues = append(fieldValues, args[i+1])
			} else if v, ok := strings.CutPrefix(a, f+"="); ok && strings.HasPrefix(f, "--") {
				fieldValues = append(fieldValues, v)
			} else if len(f) == 2 && strings.HasPrefix(a, f) && len(a) > 2 {
				fieldValues = append(fieldValues, a[2:])
			}
		}
	}
	hasInput := hasFlag(args, "--input")
	if len(pos) > 1 && pos[1] == "graphql" {
		for _, v := range fieldValues {
			if strings.Contains(v, "mutation") {
				return true
			}
		}
		return false
	}
	if method != "" {
		return mutatingMethod(method)
	}
	return len(fieldValues) > 0 || hasInput // fields make gh use POST
}

func mutatingMethod(m string) bool {
	switch strings.ToUpper(m) {
	case "POST", "PUT", "PATCH", "DELETE":
		return true
	}
	return false
}

// curlShortValue lists curl's short options that take a value, so that the rest of an option
// cluster (-sSXPOST) or the next word is read as that value.
const curlShortValue = "bcCdDeEFHKmoPQrtTuUwxXyYz"

func curlMutates(args []string) bool {
	var method string
	var data, get bool
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if strings.HasPrefix(a, "--") {
			name, value, hasValue := strings.Cut(a, "=")
			switch name {
			case "--request":
				if !hasValue && i+1 < len(args) {
					i++
					value = args[i]
				}
				method = value
			case "--data", "--data-raw", "--data-binary", "--data-urlencode", "--data-ascii", "--json",
				"--form", "--form-string", "--upload-file":
				data = true
			case "--get":
				get = true
			}
			continue
		}
		if len(a) < 2 || a[0] != '-' {
			continue
		}
	cluster:
		for j := 1; j < len(a); j++ {
			c := a[j]
			if c == 'G' {
				get = true
				continue
			}
			if strings.IndexByte(curlShortValue, c) < 0 {
				continue
			}
			// This option takes a value: the rest of the cluster, or the next word.
			value := a[j+1:]
			if value == "" && i+1 < len(args) {
				i++
				value = args[i]
			}
			switch c {
			case 'X':
				method = value
			case 'd', 'F', 'T':
				data = true
			}
			break cluster
		}
	}
	if method != "" {
		return mutatingMethod(method)
	}
	return data && !get
}

// awsOpVerbs are the leading words of AWS CLI operations that create, change, send or delete.
var awsOpVerbs = map[string]bool{}

func init() {
	for _, v := range strings.Fields(`create delete put update modify terminate run start stop reboot send
		publish invoke attach detach associate disassociate register deregister remove add tag untag
		set reset restore cancel import enable disable revoke authorize copy upload deploy execute
		replace release allocate request batch-write batch-delete purge change complete accept reject
		apply rotate submit schedule subscribe unsubscribe confirm respond signal admin-create
		admin-delete admin-set admin-update admin-disable admin-enable`) {
		awsOpVerbs[v] = true
	}
}

func awsMutatingOp(op string) bool {
	if awsOpVerbs[op] {
		return true
	}
	for i := 0; i < len(op); i++ {
		if op[i] == '-' && awsOpVerbs[op[:i]] {
			return true
		}
	}
	return false
}

const (
	gcloudVerbs = "create delete deploy update patch set add remove start stop reset resize restart import publish submit apply enable disable rollback restore cancel move undelete execute run call ssh scp upload"
	azVerbs     = "create delete update set add remove deploy start stop restart purge import invoke run upload assign cancel restore swap scale publish send deallocate redeploy reimage resize renew"
	stripeVerbs = "create update delete post cancel capture confirm pay void finalize send refund reject approve attach detach close reopen mark_uncollectible resume apply reverse expire publish"
)

// cloudVerb reports whether a gcloud or az command word is a mutating verb: one of verbs, or
// one of them followed by "-" (add-iam-policy-binding, set-iam-policy).
func cloudVerb(w, verbs string) bool {
	if strings.Contains(" "+verbs+" ", " "+w+" ") {
		return true
	}
	if i := strings.IndexByte(w, '-'); i > 0 {
		return strings.Contains(" "+verbs+" ", " "+w[:i]+" ")
	}
	return false
}

// remotePath reports whether an scp/rsync operand names a remote location.
func remotePath(p string) bool {
	for _, scheme := range []string{"scp://", "rsync://", "sftp://", "ssh://"} {
		if strings.HasPrefix(p, scheme) {
			return true
		}
	}
	colon := strings.IndexByte(p, ':')
	if colon <= 0 {
		return false
	}
	return !strings.ContainsRune(p[:colon], '/') // host:path or user@host:path, not ./dir:x
}

var (
	mcpVerbs   = map[string]bool{}
	mcpMakers  = map[string]bool{}
	mcpExterns = map[string]bool{}
	mcpReaders = map[string]bool{}
)

func init() {
	for _, v := range strings.Fields("send post publish deploy charge refund pay payout transfer merge push notify email sms tweet invoice dispatch broadcast") {
		mcpVerbs[v] = true
	}
	for _, v := range strings.Fields("create add issue submit open execute") {
		mcpMakers[v] = true
	}
	for _, v := range strings.Fields("get list read search describe fetch find query show view lookup check count download") {
		mcpReaders[v] = true
	}
	for _, v := range strings.Fields("payment charge refund payout transfer invoice subscription order issue pull comment release message email post tweet deployment repository gist review webhook ticket") {
		mcpExterns[v] = true
	}
}

// mcpOutbound is the built-in MCP rule's test of a tool name.
func mcpOutbound(name string) bool {
	tool := name
	if rest, ok := strings.CutPrefix(name, "mcp__"); ok {
		_, t, found := strings.Cut(rest, "__")
		if !found {
			return false // not an MCP tool name
		}
		tool = t // agent-rewind's own tools (checkpoint, guard_effect, ...) start with no outbound verb
	}
	w := words(tool)
	if len(w) > 1 && !mcpVerbs[w[0]] && !mcpMakers[w[0]] && !mcpReaders[w[0]] {
		w = w[1:] // a service prefix, as in slack_post_message or github_create_issue
	}
	if len(w) == 0 {
		return false
	}
	if mcpVerbs[w[0]] {
		return true
	}
	if mcpMakers[w[0]] {
		for _, x := range w[1:] {
			if mcpExterns[x] {
				return true
			}
		}
	}
	return false
}
