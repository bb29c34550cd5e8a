// Command hclcheck parses every .tf and .tftpl file of the infra/aws module with HashiCorp's
// HCL parser and checks the module's contract without an engine or provider: typed and
// validated variables, the partial S3 backend, the pinned provider version, a provider block
// free of test-only settings, templates given exactly the variables they use, the outputs
// the CLI reads, and every IAM statement (policies.go). It prints one line per check and a jest-style "Tests:" summary.
//
//	go run . <module-dir> <versions.env>
package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

type result struct {
	passed, failed int
}

func (r *result) check(name string, problems []string) {
	if len(problems) == 0 {
		r.passed++
		fmt.Printf("  ✓ %s\n", name)
		return
	}
	r.failed++
	fmt.Printf("  ✕ %s\n", name)
	for _, p := range problems {
		fmt.Printf("      %s\n", p)
	}
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: hclcheck <module-dir> <versions.env>")
		os.Exit(2)
	}
	dir, versionsFile := os.Args[1], os.Args[2]
	r := &result{}
	parser := hclparse.NewParser()

	tfFiles, _ := filepath.Glob(filepath.Join(dir, "*.tf"))
	templates, _ := filepath.Glob(filepath.Join(dir, "*.tftpl"))
	sort.Strings(tfFiles)
	sort.Strings(templates)
	r.check("the module has .tf files and a .tftpl template", func() []string {
		if len(tfFiles) == 0 || len(templates) == 0 {
			return []string{fmt.Sprintf("found %d .tf and %d .tftpl files in %s", len(tfFiles), len(templates), dir)}
		}
		return nil
	}())

	bodies := map[string]*hclsyntax.Body{}
	for _, path := range tfFiles {
		file, diags := parser.ParseHCLFile(path)
		r.check("parses "+filepath.Base(path), diagProblems(diags))
		if file != nil && !diags.HasErrors() {
			bodies[filepath.Base(path)] = file.Body.(*hclsyntax.Body)
		}
	}
	templateVars := map[string][]string{}
	templateExprs := map[string]hclsyntax.Expression{}
	for _, path := range templates {
		src, err := os.ReadFile(path)
		if err != nil {
			r.check("parses "+filepath.Base(path), []string{err.Error()})
			continue
		}
		expr, diags := hclsyntax.ParseTemplate(src, path, hcl.InitialPos)
		r.check("parses template "+filepath.Base(path), diagProblems(diags))
		if !diags.HasErrors() {
			templateVars[filepath.Base(path)] = rootNames(expr.Variables())
			templateExprs[filepath.Base(path)] = expr
		}
	}

	blocks := allBlocks(bodies)
	r.check("every variable declares a type and at least one validation", func() (problems []string) {
		seen := 0
		for _, b := range blocks["variable"] {
			seen++
			name := b.Labels[0]
			if _, ok := b.Body.Attributes["type"]; !ok {
				problems = append(problems, fmt.Sprintf("variable %q has no type", name))
			}
			if countBlocks(b.Body, "validation") == 0 {
				problems = append(problems, fmt.Sprintf("variable %q has no validation block", name))
			}
			if _, ok := b.Body.Attributes["sensitive"]; ok {
				problems = append(problems, fmt.Sprintf("variable %q is marked sensitive: secrets never enter the module", name))
			}
		}
		if seen == 0 {
			problems = append(problems, "no variable blocks found")
		}
		return problems
	}())

	r.check("declares exactly the tfvars contract's variables", func() []string {
		want := []string{"amis", "bucket", "cluster", "existing_vpc_id", "nat64", "nat64_generation", "nodegroups", "otel_logs", "region", "vpc_cidr", "workload_ca_publish"}
		var got []string
		for _, b := range blocks["variable"] {
			got = append(got, b.Labels[0])
		}
		sort.Strings(got)
		if strings.Join(got, ",") != strings.Join(want, ",") {
			return []string{fmt.Sprintf("variables are %v, the contract is %v", got, want)}
		}
		return nil
	}())

	terraform := blocks["terraform"]
	r.check(`the state backend is a partial backend "s3" {}`, func() []string {
		for _, t := range terraform {
			for _, b := range t.Body.Blocks {
				if b.Type != "backend" {
					continue
				}
				if len(b.Labels) != 1 || b.Labels[0] != "s3" {
					return []string{fmt.Sprintf("backend %v, want s3", b.Labels)}
				}
				if len(b.Body.Attributes) != 0 || len(b.Body.Blocks) != 0 {
					return []string{"the s3 backend block must be empty: the CLI passes -backend-config"}
				}
				return nil
			}
		}
		return []string{"no backend block in the terraform block"}
	}())

	r.check("required_providers pins aws to AWS_PROVIDER_VERSION of versions.env", func() []string {
		want, err := envValue(versionsFile, "AWS_PROVIDER_VERSION")
		if err != nil {
			return []string{err.Error()}
		}
		for _, t := range terraform {
			for _, b := range t.Body.Blocks {
				if b.Type != "required_providers" {
					continue
				}
				attr, ok := b.Body.Attributes["aws"]
				if !ok {
					return []string{"required_providers has no aws entry"}
				}
				val, diags := attr.Expr.Value(nil)
				if diags.HasErrors() {
					return diagProblems(diags)
				}
				source := val.GetAttr("source").AsString()
				version := val.GetAttr("version").AsString()
				if source != "hashicorp/aws" || version != "= "+want {
					return []string{fmt.Sprintf("aws is %s %q, want hashicorp/aws %q", source, version, "= "+want)}
				}
				return nil
			}
		}
		return []string{"no required_providers block"}
	}())

	r.check("the shipped provider block carries no endpoints, credentials or skip_* settings", func() (problems []string) {
		forbidden := regexp.MustCompile(`^(skip_.*|endpoints|access_key|secret_key|token|s3_use_path_style|insecure|profile|shared_credentials_files)$`)
		for _, p := range blocks["provider"] {
			for name := range p.Body.Attributes {
				if forbidden.MatchString(name) {
					problems = append(problems, fmt.Sprintf("provider %s sets %s", p.Labels[0], name))
				}
			}
			for _, b := range p.Body.Blocks {
				if forbidden.MatchString(b.Type) {
					problems = append(problems, fmt.Sprintf("provider %s has a %s block", p.Labels[0], b.Type))
				}
			}
		}
		if len(blocks["provider"]) == 0 {
			problems = append(problems, "no provider block")
		}
		return problems
	}())

	calls := templatefileCalls(bodies)
	r.check("every .tftpl is rendered by templatefile with exactly the variables it uses", func() (problems []string) {
		for name, used := range templateVars {
			passed, ok := calls[name]
			if !ok {
				problems = append(problems, fmt.Sprintf("%s is never rendered by templatefile()", name))
				continue
			}
			if strings.Join(used, ",") != strings.Join(passed, ",") {
				problems = append(problems, fmt.Sprintf("%s uses %v but templatefile passes %v", name, used, passed))
			}
		}
		for name := range calls {
			if _, ok := templateVars[name]; !ok {
				problems = append(problems, fmt.Sprintf("templatefile renders %s, which does not exist", name))
			}
		}
		return problems
	}())

	r.check("outputs vpc_id, subnet_ids and asg_names exist", func() (problems []string) {
		have := map[string]bool{}
		for _, b := range blocks["output"] {
			have[b.Labels[0]] = true
		}
		for _, want := range []string{"vpc_id", "subnet_ids", "asg_names"} {
			if !have[want] {
				problems = append(problems, "missing output "+want)
			}
		}
		return problems
	}())

	r.check("no SSH ingress: no security group rule opens port 22", func() (problems []string) {
		for _, kind := range []string{"aws_vpc_security_group_ingress_rule", "aws_security_group_rule", "aws_security_group"} {
			for _, b := range blocks["resource"] {
				if b.Labels[0] != kind {
					continue
				}
				hclsyntax.VisitAll(b.Body, func(n hclsyntax.Node) hcl.Diagnostics {
					if a, ok := n.(*hclsyntax.Attribute); ok && (a.Name == "from_port" || a.Name == "to_port") {
						if v, d := a.Expr.Value(nil); !d.HasErrors() && v.Type().FriendlyName() == "number" {
							if f, _ := v.AsBigFloat().Int64(); f == 22 {
								problems = append(problems, fmt.Sprintf("%s.%s opens port 22", b.Labels[0], b.Labels[1]))
							}
						}
					}
					return nil
				})
			}
		}
		return problems
	}())

	// The NAT64 script, rendered with sample values the way templatefile() renders it, must be
	// valid bash that ShellCheck accepts (where ShellCheck is installed).
	if expr, ok := templateExprs["nat64.sh.tftpl"]; ok {
		r.check("nat64.sh.tftpl renders to a script bash -n and ShellCheck accept", renderAndCheck(expr))
	}

	policyChecks(r, dir, blocks)

	fmt.Printf("hclcheck: %d .tf and %d .tftpl files in %s\n", len(tfFiles), len(templates), dir)
	total := r.passed + r.failed
	if r.failed > 0 {
		fmt.Printf("Tests: %d failed, %d passed, %d total\n", r.failed, r.passed, total)
		os.Exit(1)
	}
	fmt.Printf("Tests: %d passed, %d total\n", r.passed, total)
}

func diagProblems(diags hcl.Diagnostics) (problems []string) {
	for _, d := range diags {
		problems = append(problems, d.Error())
	}
	return problems
}

func rootNames(traversals []hcl.Traversal) []string {
	set := map[string]bool{}
	for _, t := range traversals {
		set[t.RootName()] = true
	}
	names := make([]string, 0, len(set))
	for n := range set {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func allBlocks(bodies map[string]*hclsyntax.Body) map[string][]*hclsyntax.Block {
	out := map[string][]*hclsyntax.Block{}
	names := make([]string, 0, len(bodies))
	for n := range bodies {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		for _, b := range bodies[n].Blocks {
			out[b.Type] = append(out[b.Type], b)
		}
	}
	return out
}

func countBlocks(body *hclsyntax.Body, kind string) int {
	n := 0
	for _, b := range body.Blocks {
		if b.Type == kind {
			n++
		}
	}
	return n
}

// templatefileCalls finds templatefile("${path.module}/NAME", { ... }) calls and returns the
// object keys passed for each template file name.
func templatefileCalls(bodies map[string]*hclsyntax.Body) map[string][]string {
	calls := map[string][]string{}
	for _, body := range bodies {
		hclsyntax.VisitAll(body, func(n hclsyntax.Node) hcl.Diagnostics {
			call, ok := n.(*hclsyntax.FunctionCallExpr)
			if !ok || call.Name != "templatefile" || len(call.Args) != 2 {
				return nil
			}
			tmpl, ok := call.Args[0].(*hclsyntax.TemplateExpr)
			if !ok || len(tmpl.Parts) == 0 {
				return nil
			}
			lit, ok := tmpl.Parts[len(tmpl.Parts)-1].(*hclsyntax.LiteralValueExpr)
			if !ok {
				return nil
			}
			name := strings.TrimPrefix(lit.Val.AsString(), "/")
			var keys []string
			if obj, ok := call.Args[1].(*hclsyntax.ObjectConsExpr); ok {
				for _, item := range obj.Items {
					if key, d := item.KeyExpr.Value(nil); !d.HasErrors() {
						keys = append(keys, key.AsString())
					}
				}
			}
			sort.Strings(keys)
			calls[name] = keys
			return nil
		})
	}
	return calls
}

func envValue(path, key string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(strings.TrimSpace(s.Text()), key+"="); ok {
			return v, nil
		}
	}
	return "", fmt.Errorf("%s has no %s", path, key)
}

func renderAndCheck(expr hclsyntax.Expression) []string {
	str := cty.StringVal
	ctx := &hcl.EvalContext{Variables: map[string]cty.Value{
		"cluster": str("demo"), "region": str("us-west-2"), "bucket": str("podmin-demo-abc"),
		"arch": str("arm64"), "generation": str("2026-11-29T12:00:00Z"), "translator": str("shared-us-west-2a"),
		"data_eni_id": str("eni-0123456789abcdef0"), "data_ipv4": str("10.0.255.244"),
		"data_ipv4_cidr": str("10.0.255.240/28"), "asg_name": str("podmin-demo-nat64-shared-us-west-2a"),
		"hook_name":         str("podmin-nat64-handoff"),
		"workload_subnets":  cty.ListVal([]cty.Value{str("2600:1f14:1:2a00::/64"), str("2600:1f14:1:2a01::/64")}),
		"rejected_prefixes": cty.ListVal([]cty.Value{str("64:ff9b::a00:0/104"), str("64:ff9b::a9fe:0/112")}),
	}}
	val, diags := expr.Value(ctx)
	if diags.HasErrors() {
		return diagProblems(diags)
	}
	script := val.AsString()
	var problems []string
	for _, want := range []string{"workload_subnets=('2600:1f14:1:2a00::/64' '2600:1f14:1:2a01::/64' )", "generation='2026-11-29T12:00:00Z'", "--netfilter --pool6"} {
		if !strings.Contains(script, want) {
			problems = append(problems, fmt.Sprintf("rendered script lacks %q", want))
		}
	}
	f, err := os.CreateTemp("", "nat64-*.sh")
	if err != nil {
		return append(problems, err.Error())
	}
	defer os.Remove(f.Name())
	if _, err := f.WriteString(script); err != nil {
		return append(problems, err.Error())
	}
	f.Close()
	if out, err := exec.Command("bash", "-n", f.Name()).CombinedOutput(); err != nil {
		problems = append(problems, "bash -n: "+strings.TrimSpace(string(out)))
	}
	if _, err := exec.LookPath("shellcheck"); err == nil {
		if out, err := exec.Command("shellcheck", "--severity=style", "--shell=bash", f.Name()).CombinedOutput(); err != nil {
			problems = append(problems, "shellcheck:\n"+string(out))
		}
	}
	return problems
}
