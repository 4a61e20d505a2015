// Command kube is kube-apiserver, kube-controller-manager, kube-scheduler,
// kubelet and kubectl in one binary: the first argument names the
// component, or the program's name does when it is kubectl (a link named
// kubectl runs kubectl).
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"k8s.io/component-base/cli"
	"k8s.io/component-base/logs"
	kubectl "k8s.io/kubectl/pkg/cmd"
	kubectlutil "k8s.io/kubectl/pkg/cmd/util"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controller "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
	kubelet "k8s.io/kubernetes/cmd/kubelet/app"
)

func main() {
	if filepath.Base(os.Args[0]) == "kubectl" {
		runKubectl()
		return
	}
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: kube apiserver|controller-manager|scheduler|kubelet|kubectl [flags]")
		os.Exit(2)
	}
	component := os.Args[1]
	os.Args = append(os.Args[:1], os.Args[2:]...)
	var cmd *cobra.Command
	switch component {
	case "apiserver":
		cmd = apiserver.NewAPIServerCommand()
	case "controller-manager":
		cmd = controller.NewControllerManagerCommand()
	case "scheduler":
		cmd = scheduler.NewSchedulerCommand()
	case "kubelet":
		cmd = kubelet.NewKubeletCommand(context.Background())
	case "kubectl":
		runKubectl()
		return
	default:
		fmt.Fprintf(os.Stderr, "kube: unknown component %q\n", component)
		os.Exit(2)
	}
	os.Exit(cli.Run(cmd))
}

// runKubectl is k8s.io/kubernetes/cmd/kubectl's main: a failed command
// exits with its status (kubectl exec: the remote command's).
func runKubectl() {
	logs.GlogSetter(kubectl.GetLogVerbosity(os.Args)) // nolint:errcheck
	command := kubectl.NewDefaultKubectlCommand()
	if err := cli.RunNoErrOutput(command); err != nil {
		kubectlutil.CheckErr(err)
	}
}
