// A take5 arena bot in Go, written from the protocol file alone (proto/take5/v1/bot.proto).
//
// Strategy ("greedy", as the Node.js example): play the card that costs the fewest bull heads if
// it were placed now, the highest such card on a tie; take the row with the fewest bull heads;
// draft the card with the most.
//
// Build: ./build.sh (protoc + Debian's Go packages, no module proxy) makes ./take5-go-bot, a
// statically linked binary. Run: TAKE5_LISTEN=unix:/tmp/go.sock ./take5-go-bot (or --listen ADDR).
// The referee starts it through ./run locally, and through bot.toml in its Docker sandbox.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	take5v1 "take5arena/take5/v1"
)

const (
	name            = "go-greedy"
	version         = "1.0"
	protocolVersion = "1.0"
	maxRowLength    = 5
)

// ---- rules (docs/rules.md 1 and 4) ----------------------------------------------------------

func bullHeads(card uint32) int {
	switch {
	case card == 55:
		return 7
	case card%11 == 0:
		return 5
	case card%10 == 0:
		return 3
	case card%5 == 0:
		return 2
	}
	return 1
}

func penalty(cards []uint32) int {
	sum := 0
	for _, c := range cards {
		sum += bullHeads(c)
	}
	return sum
}

// targetRow is the row whose last card is the highest one below card, or -1.
func targetRow(rows [][]uint32, card uint32) int {
	best, bestEnd := -1, uint32(0)
	for i, row := range rows {
		if len(row) == 0 {
			continue
		}
		end := row[len(row)-1]
		if end < card && end > bestEnd {
			best, bestEnd = i, end
		}
	}
	return best
}

// cheapestRow: fewest bull heads, then fewest cards, then the lowest index.
func cheapestRow(rows [][]uint32) int {
	best := 0
	for i, row := range rows {
		a, b := penalty(row), penalty(rows[best])
		if a < b || (a == b && len(row) < len(rows[best])) {
			best = i
		}
	}
	return best
}

func costNow(rows [][]uint32, card uint32) int {
	i := targetRow(rows, card)
	if i < 0 {
		return penalty(rows[cheapestRow(rows)])
	}
	if len(rows[i]) >= maxRowLength {
		return penalty(rows[i])
	}
	return 0
}

func rowsOf(view *take5v1.View) [][]uint32 {
	rows := make([][]uint32, 0, len(view.GetRows()))
	for _, r := range view.GetRows() {
		rows = append(rows, r.GetCards())
	}
	return rows
}

// ---- the service --------------------------------------------------------------------------

type bot struct {
	take5v1.UnimplementedBotServer
}

func (bot) Handshake(_ context.Context, req *take5v1.HandshakeRequest) (*take5v1.HandshakeResponse, error) {
	log.Printf("handshake from %q, protocol %s", req.GetReferee(), req.GetProtocolVersion())
	return &take5v1.HandshakeResponse{
		Name: name, Version: version, Author: "take5 arena",
		Sdk: "grpc-go " + grpc.Version + ", " + runtime.Version(), ProtocolVersion: protocolVersion,
	}, nil
}

func (bot) PickCard(_ context.Context, req *take5v1.PickCardRequest) (*take5v1.PickCardResponse, error) {
	view := req.GetView()
	if view.GetPhase() == take5v1.Phase_PHASE_DRAFT {
		pool := append([]uint32(nil), view.GetPool()...)
		if len(pool) == 0 {
			return nil, status.Error(codes.InvalidArgument, "empty pool")
		}
		sort.Slice(pool, func(i, j int) bool {
			hi, hj := bullHeads(pool[i]), bullHeads(pool[j])
			return hi > hj || (hi == hj && pool[i] < pool[j])
		})
		return &take5v1.PickCardResponse{Card: proto.Uint32(pool[0])}, nil
	}
	hand := view.GetHand()
	if len(hand) == 0 {
		return nil, status.Error(codes.InvalidArgument, "empty hand")
	}
	rows := rowsOf(view)
	best, bestCost := hand[0], costNow(rows, hand[0])
	for _, card := range hand[1:] {
		cost := costNow(rows, card)
		if cost < bestCost || (cost == bestCost && card > best) {
			best, bestCost = card, cost
		}
	}
	// stderr, a line a turn: the referee keeps it beside the turn in the record, and an arena shows
	// it to this bot's author beside the replay's turn
	log.Printf("round %d turn %d: playing %d (costs %d now)", view.GetRound(), view.GetTurn(), best, bestCost)
	return &take5v1.PickCardResponse{Card: proto.Uint32(best)}, nil
}

func (bot) ChooseRow(_ context.Context, req *take5v1.ChooseRowRequest) (*take5v1.ChooseRowResponse, error) {
	return &take5v1.ChooseRowResponse{Row: proto.Uint32(uint32(cheapestRow(rowsOf(req.GetView()))))}, nil
}

func (bot) GameOver(_ context.Context, req *take5v1.GameOverRequest) (*take5v1.GameOverResponse, error) {
	seat := req.GetSeat()
	if int(seat) < len(req.GetPlaces()) && int(seat) < len(req.GetScores()) {
		log.Printf("game %s over: place %d with %d points", req.GetGameId(), req.GetPlaces()[seat], req.GetScores()[seat])
	}
	return &take5v1.GameOverResponse{}, nil
}

// ---- serving ------------------------------------------------------------------------------

func listen(address string) (net.Listener, error) {
	if strings.HasPrefix(address, "unix:") {
		path := strings.TrimPrefix(address, "unix:")
		_ = os.Remove(path)
		return net.Listen("unix", path)
	}
	return net.Listen("tcp", address)
}

func main() {
	log.SetFlags(log.LstdFlags | log.Lmicroseconds)
	log.SetPrefix(name + " ")
	address := flag.String("listen", os.Getenv("TAKE5_LISTEN"), "unix:/path.sock or host:port")
	flag.Parse()
	if *address == "" {
		fmt.Fprintln(os.Stderr, "no address to serve on: set TAKE5_LISTEN or pass --listen (unix:/path.sock or host:port)")
		os.Exit(2)
	}
	lis, err := listen(*address)
	if err != nil {
		log.Printf("cannot listen on %s: %v", *address, err)
		os.Exit(1)
	}
	server := grpc.NewServer()
	take5v1.RegisterBotServer(server, bot{})
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-stop
		log.Print("stopping")
		go func() { time.Sleep(time.Second); os.Exit(0) }()
		server.GracefulStop()
	}()
	log.Printf("serving on %s", *address)
	if err := server.Serve(lis); err != nil {
		log.Printf("serve: %v", err)
		os.Exit(1)
	}
}
