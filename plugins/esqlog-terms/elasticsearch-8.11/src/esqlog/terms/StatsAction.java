package esqlog.terms;

import java.io.IOException;
import java.util.List;

import org.elasticsearch.action.ActionType;
import org.elasticsearch.action.FailedNodeException;
import org.elasticsearch.action.support.ActionFilters;
import org.elasticsearch.action.support.nodes.BaseNodesRequest;
import org.elasticsearch.action.support.nodes.TransportNodesAction;
import org.elasticsearch.cluster.node.DiscoveryNode;
import org.elasticsearch.cluster.service.ClusterService;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.common.inject.Inject;
import org.elasticsearch.tasks.Task;
import org.elasticsearch.threadpool.ThreadPool;
import org.elasticsearch.transport.TransportRequest;
import org.elasticsearch.transport.TransportService;

/**
 * The nodes action behind {@code GET /_esqlog/terms/stats}, on Elasticsearch 8.11 and 8.12: every node (or those the
 * request names) reports its own caches (NodeStats), so one request shows the whole cluster's,
 * where the endpoint before 1.10.0 showed the receiving node's alone and a cache too small on
 * another node went unseen. Its name sits under {@code cluster:monitor/}, so a role with the
 * {@code monitor} cluster privilege may call it.
 *
 * <p>Elasticsearch changed this API's constructor, type parameters, request classes and
 * injection annotation between 8.11 and 9.1: this is the one class compiled per range of it
 * (elasticsearch-8.11/, -8.13/, -8.16/, -9.0/, and from 9.1 -9.1-9.x/).
 */
public final class StatsAction extends TransportNodesAction<StatsAction.Request, StatsResponse,
        StatsAction.NodeRequest, NodeStats> {
    static final String NAME = "cluster:monitor/esqlog/terms/stats";
    static final ActionType<StatsResponse> TYPE = new ActionType<>(NAME, StatsResponse::new);

    @Inject
    public StatsAction(ThreadPool threadPool, ClusterService clusterService,
                       TransportService transportService, ActionFilters actionFilters) {
        super(NAME, threadPool, clusterService, transportService, actionFilters, Request::new,
            NodeRequest::new, threadPool.executor(ThreadPool.Names.MANAGEMENT));
    }

    @Override
    protected StatsResponse newResponse(Request request, List<NodeStats> nodes,
                                        List<FailedNodeException> failures) {
        return new StatsResponse(clusterService.getClusterName(), nodes, failures);
    }

    @Override
    protected NodeRequest newNodeRequest(Request request) {
        return new NodeRequest();
    }

    @Override
    protected NodeStats newNodeResponse(StreamInput in, DiscoveryNode node) throws IOException {
        return new NodeStats(in, node);
    }

    @Override
    protected NodeStats nodeOperation(NodeRequest request, Task task) {
        return new NodeStats(clusterService.localNode());
    }

    /** The nodes to ask (ids, names or the engine's node filters; none: all). */
    public static final class Request extends BaseNodesRequest<Request> {
        Request(String[] nodes) {
            super(nodes);
        }

        Request(StreamInput in) throws IOException {
            super(in);
        }
    }

    /** The request each node answers: it carries nothing, a node reports all of its caches. */
    public static final class NodeRequest extends TransportRequest {
        NodeRequest() {
        }

        NodeRequest(StreamInput in) throws IOException {
            super(in);
        }
    }
}
