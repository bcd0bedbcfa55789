package node_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/hexagonal-operator/operator/test/node"
)

func TestNodeRunsAPod(t *testing.T) {
	c := node.StartT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cs := c.Clientset()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "sleeper", Namespace: metav1.NamespaceDefault},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name: "pause", Image: node.PauseImage, ImagePullPolicy: corev1.PullNever,
				SecurityContext: &corev1.SecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](65535)},
			}},
			TerminationGracePeriodSeconds: ptr.To[int64](1),
		},
	}
	began := time.Now()
	if _, err := cs.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var got *corev1.Pod
	for ctx.Err() == nil {
		p, err := cs.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err == nil {
			got = p
			if p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "" {
				break
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	if got == nil || got.Status.Phase != corev1.PodRunning {
		t.Fatalf("pod not Running within the deadline: %+v", got)
	}
	t.Logf("figure: pod Running %s after create, IP %s on %s", time.Since(began).Round(10*time.Millisecond), got.Status.PodIP, got.Spec.NodeName)
}
