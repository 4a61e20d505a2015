// Command kube is kube-apiserver, kube-controller-manager, kube-scheduler
// and kubelet in one binary: the first argument names the component.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/component-base/cli"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controller "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
	kubelet "k8s.io/kubernetes/cmd/kubelet/app"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: kube apiserver|controller-manager|scheduler|kubelet [flags]")
		os.Exit(2)
	}
	var cmd *cobra.Command
	switch os.Args[1] {
	case "apiserver":
		cmd = apiserver.NewAPIServerCommand()
	case "controller-manager":
		cmd = controller.NewControllerManagerCommand()
	case "scheduler":
		cmd = scheduler.NewSchedulerCommand()
	case "kubelet":
		cmd = kubelet.NewKubeletCommand(context.Background())
	default:
		fmt.Fprintf(os.Stderr, "kube: unknown component %q\n", os.Args[1])
		os.Exit(2)
	}
	os.Args = append(os.Args[:1], os.Args[2:]...)
	os.Exit(cli.Run(cmd))
}
